/**
 * One burst of bench:workflows: `jobs` jobs queued at once on a scale set of their own with room
 * for all of them, fed by webhooks or by the runner scale set API, its repository drawing on
 * `credentials` credentials (bench/credential-pool.ts). Waits until every job is in progress,
 * completed and every machine gone, then reads what the fakes recorded: the fake GitHub's jobs
 * and requests, the shim's create requests, the simulator's machine timelines (burst-figures.ts
 * turns them into the configured and booted-waiting figures).
 */
import { JIT_PER_MINUTE, type StackProfile } from "../e2e/profiles.ts";
import type { Stack } from "../e2e/stack.ts";
import { DEFAULT_BATCH_CREATE_MAX } from "../shims/simulator/simulator.ts";
import { createsAsked } from "../test/fake-shim/requests.ts";
import {
  createScaleSet,
  type Intake,
  type JitTiming,
  jobLabels,
  machineTimelines,
  shimRequests,
  waitJobs,
  waitMachinesGone,
} from "./bench-world.ts";
import { measureCpu } from "./burst-cpu.ts";
import { bootedWaiting, configuredOverFloorPlusBoot, createsOutstandingPeak, githubFloorS, nthTime } from "./burst-figures.ts";
import { type CredentialPool, PoolUnavailable } from "./credential-pool.ts";
import { byCredential, byOperation, rateLimitedAnswers } from "./github-calls.ts";
import { note, percentile } from "./harness.mjs";
import { kindsDelta, minus, readUsage, rounded, scaled } from "./usage-units.ts";

export interface BurstPlan {
  /** The scale set's name, its jobs' label and name at the fake GitHub. */
  name: string;
  jobs: number;
  credentials: number;
  intake: Intake;
  /** Also the CPU profile and perf split, when BENCH_CPU_PROFILE / BENCH_PERF ask for them (one burst a run). */
  instrument: boolean;
}

export interface BurstSetting {
  stack: Stack;
  profile: StackProfile;
  jit: JitTiming;
  localObservability: boolean;
  pool: CredentialPool;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

export async function runBurst(s: BurstSetting, plan: BurstPlan): Promise<Record<string, unknown>> {
  const { stack, profile } = s;
  const { gh } = stack;
  const about = {
    profile: profile.name,
    shim: profile.shim,
    intake: plan.intake,
    ...(plan.intake === "webhook" && { jit_config_timing: s.jit }),
    jobs: plan.jobs,
    credentials: plan.credentials,
    boot_delay_ms: stack.sim.config.boot_delay_ms,
    boot_jitter: stack.sim.config.boot_jitter,
  };
  let logins: string[];
  try {
    logins = await s.pool.use(plan.credentials);
  } catch (err) {
    if (!(err instanceof PoolUnavailable)) throw err;
    note(`${plan.name}: skipped: ${err.message}`);
    return { ...about, skipped: err.message };
  }
  const limited = profile.github?.secondary !== undefined;
  const ss = await createScaleSet(stack, plan.name, plan.jobs, plan.intake, s.jit);
  await gh.clearRequests();
  const shimRequestsBefore = (await shimRequests(stack)).length;
  note(`${plan.name}: ${plan.jobs} jobs queued at once (${plan.intake}, ${plan.credentials} credential${plan.credentials > 1 ? "s" : ""})`);
  const cpu = await measureCpu(stack, { instrument: plan.instrument, localObservability: s.localObservability });
  const usageBefore = await readUsage(stack);
  const t0 = Date.now();
  await gh.queueJobs({ repository: "octo/app", labels: jobLabels(plan.name, plan.intake), count: plan.jobs, name: plan.name });
  // GitHub's points limit applies to REST JIT configs only: the scale set API's come from the Actions service.
  const floorS = limited && plan.intake === "webhook" ? githubFloorS(plan.jobs, JIT_PER_MINUTE, plan.credentials) : null;
  const bootS = stack.sim.config.boot_delay_ms / 1000;
  const timeout = Math.max(600_000, ((floorS ?? 0) + bootS) * 2000);
  // A run that does not finish still reports what it saw (with how many jobs never got there).
  const jobs = await waitJobs(stack, plan.name, (j) => j.in_progress_at !== null, timeout, "in progress", true);
  const started = jobs.filter((j) => j.in_progress_at !== null);
  const firstQueued = Math.min(...jobs.map((j) => j.queued_at));
  const allStarted = Math.max(...started.map((j) => j.in_progress_at!));
  note(`${plan.name}: ${started.length} of ${plan.jobs} in progress after ${allStarted - firstQueued} ms`);
  const completed = (
    await waitJobs(stack, plan.name, (j) => j.status === "completed", started.length === jobs.length ? timeout : 1, "completed", true)
  ).filter((j) => j.status === "completed");
  const allCompleted = Math.max(...completed.map((j) => j.completed_at!));
  // Settled: every machine gone, so every removal the coordinator makes at GitHub is counted.
  const left = await waitMachinesGone(stack, 300_000);
  const cpuPerRunner = await cpu.stop();
  const usageAfter = await readUsage(stack);

  const shim = (await shimRequests(stack)).slice(shimRequestsBefore);
  const asked = createsAsked(shim);
  const runnersCreated = new Set(asked.filter((c) => c.status !== null && c.status < 300).map((c) => c.name)).size;
  // The create requests themselves (one per machine, or one per batch): how many, and from the first sent to the last answered.
  const createRequests = shim.filter((r) => r.operation === "create" || r.operation === "create_batch");
  const createRequestsWall = createRequests.length
    ? Math.max(...createRequests.map((r) => r.answered_at ?? r.at)) - Math.min(...createRequests.map((r) => r.at))
    : null;
  const ghRequests = await gh.requests();
  const startWaits = started.map((j) => j.in_progress_at! - j.queued_at).sort((a, b) => a - b);
  // The time by which the shim had been asked for, and the simulator had configured, as many machines as there were jobs.
  const creates = nthTime(
    asked.map((c) => c.at),
    plan.jobs,
  );
  const machines = await machineTimelines(stack, ss.id);
  const configured = nthTime(
    machines.flatMap((m) => (m.configured_at === null ? [] : [m.configured_at])),
    plan.jobs,
  );
  const allConfiguredS = configured === null ? null : seconds(configured - firstQueued);
  const ops = byOperation(ghRequests);
  return {
    ...about,
    all_creates_sent_s: creates === null ? null : seconds(creates - firstQueued),
    all_configured_s: allConfiguredS,
    all_in_progress_s: started.length === plan.jobs ? seconds(allStarted - firstQueued) : null,
    jobs_in_progress: started.length,
    last_in_progress_s: seconds(allStarted - firstQueued),
    all_completed_s: completed.length === plan.jobs ? seconds(allCompleted - firstQueued) : null,
    jobs_completed: completed.length,
    queued_to_in_progress: { p50_ms: percentile(startWaits, 50), p99_ms: percentile(startWaits, 99), max_ms: startWaits.at(-1) ?? null },
    ...bootedWaiting(machines),
    creates_outstanding_peak: createsOutstandingPeak(machines),
    runners_created: runnersCreated,
    machines_left: left,
    shim_create_calls: asked.length,
    shim_batch_create_max: profile.shimBatchMax ?? DEFAULT_BATCH_CREATE_MAX,
    shim_create_requests: createRequests.length,
    shim_create_requests_wall_s: createRequestsWall === null ? null : seconds(createRequestsWall),
    github_calls: ghRequests.length,
    github_calls_per_runner: runnersCreated ? Math.round((ghRequests.length / runnersCreated) * 100) / 100 : null,
    github_calls_by_operation: ops,
    github_calls_per_runner_by_operation: Object.fromEntries(
      Object.entries(ops).map(([op, n]) => [op, runnersCreated ? Math.round((n / runnersCreated) * 1000) / 1000 : null]),
    ),
    ...(plan.credentials > 1 && { github_calls_by_credential: byCredential(ghRequests) }),
    // What GitHub's points limit alone allows the pool: jobs JIT configs at JIT_PER_MINUTE a minute per credential.
    github_floor_s: floorS,
    all_in_progress_over_floor:
      floorS && started.length === plan.jobs ? Math.round(((allStarted - firstQueued) / 1000 / floorS) * 100) / 100 : null,
    configured_over_floor_plus_boot: configuredOverFloorPlusBoot(allConfiguredS, floorS, bootS),
    github_rate_limited_answers: rateLimitedAnswers(ghRequests, logins),
    ...cpuPerRunner(runnersCreated),
    // Cloudflare's billing units the coordinator counted over the burst, per job (the other scale
    // sets' ticks included: bench:cost measures a clean job and an idle day apart).
    cloudflare_units_per_job: rounded(scaled(minus(usageAfter.units, usageBefore.units), 1 / plan.jobs)),
    cloudflare_units_by_kind: kindsDelta(usageAfter, usageBefore),
    wall_s: seconds(Date.now() - t0),
  };
}
