/**
 * Runs one of the simulator-world scenarios (e2e/scenarios.ts) on the whole product (e2e/stack.ts):
 * its scale sets, then its bursts of jobs (with its restarts, outage and chaos), waits until the
 * jobs are done and the world has settled, then checks the invariants every scenario shares and
 * the scenario's own, and sums the run up (the JSON line e2e/run.ts prints):
 *
 *  - every job completed exactly once, on a runner the coordinator created;
 *  - machines created ≤ jobs + min idle;
 *  - at no time more live instances than max_runners (the coordinator's D1, through its API,
 *    and the simulator's machines, both sampled all along);
 *  - at the end nothing is left in the simulator or at GitHub but the idle minimum, and every
 *    D1 instance is deleted or idle.
 */
import { percentile, sleep } from "../bench/harness.mjs";
import { createsAsked } from "../test/fake-shim/requests.ts";
import type { RecordedRequest } from "../test/fake-shim/types.ts";
import { EC2_LIVE_STATES } from "./ec2-cloud.ts";
import { startIntruder } from "./intruder.ts";
import { type LiveSampler, sampleLive } from "./live-sampler.ts";
import type { StackProfile } from "./profiles.ts";
import { say } from "./progress.ts";
import type { ScaleSetSpec, Scenario } from "./scenarios.ts";
import { scenarioLogs, startStack } from "./stack.ts";

async function retrying<T>(fn: () => Promise<T>, tries = 100): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= tries) throw err;
      await sleep(200);
    }
  }
}

export async function runScenario(
  sc: Scenario,
  profile: StackProfile,
): Promise<{ ok: boolean; summary: Record<string, unknown>; violations: string[] }> {
  const t0 = Date.now();
  // A production-like profile is slower by design: give it more time.
  const slack = profile.name === "production" ? 3 : 1;
  // E2E_LOG_DIR=dir keeps each run's logs there (scenarioLogs).
  const logs = scenarioLogs(sc.name, t0);
  const stack = await startStack({
    profile,
    vars: sc.vars,
    // E2E_BOOT_MS=ms boots the simulated machines that long (the production profile's ~20 s), whatever the scenario says.
    sim: { ...sc.sim, ...(process.env.E2E_BOOT_MS ? { boot_delay_ms: Number(process.env.E2E_BOOT_MS) } : {}) },
    delivery: sc.delivery,
    githubSeed: sc.githubSeed,
    provider: sc.provider,
    coordinatorLog: logs.coordinatorLog,
    log: logs.log,
    ...(sc.ec2 ? { ec2: { faults: sc.ec2.faults, shimLog: logs.shimLog("ec2-shim") } } : {}),
    ...(sc.cloud ? { cloud: sc.cloud(logs.shimLog("shim")) } : {}),
  });
  const { coordinator, gh, w } = stack;
  const violations: string[] = [];
  let sampler: LiveSampler | undefined;
  let intruder: Awaited<ReturnType<typeof startIntruder>> | null = null;
  try {
    const ids = new Map<string, ScaleSetSpec>();
    // E's scale sets are the enterprise's: it is registered with the repository's credentials (a PAT).
    const owner =
      sc.entity === "enterprise"
        ? `/enterprises/${(await coordinator.api("POST", "/enterprises", { name: "acme", credentials_name: w.credentials, webhook_secret: `${w.webhookSecret}-acme` })).id}`
        : `/repositories/${w.repo.id}`;
    for (const s of sc.scaleSets) {
      const ss = await coordinator.api("POST", `${owner}/scalesets`, {
        name: s.name,
        provider_name: stack.ec2?.provider ?? stack.cloud?.provider ?? w.provider,
        labels: s.labels,
        max_runners: s.max,
        min_idle_runners: s.minIdle,
        // On EC2 the image is an AMI and the flavor an instance type.
        image: stack.cloud?.image ?? (stack.ec2 ? "ami-0123456789abcdef0" : "ubuntu:24.04"),
        flavor: stack.cloud?.flavor ?? (stack.ec2 ? "c5.large" : "small"),
        bootstrap_timeout: 2,
        ...(s.extraSpecs ? { extra_specs: s.extraSpecs } : {}),
        ...(s.intake ? { intake: s.intake } : {}),
      });
      ids.set(ss.id, s);
    }
    const instances = async () => ((await coordinator.api("GET", "/instances")) as any[]).filter((i) => ids.has(i.scale_set_id));
    // The cloud's live machines, by pool: the simulator's, or the fake EC2's instances not yet terminated.
    const machines = async (): Promise<{ pool_id: string; name: string }[]> =>
      stack.cloud
        ? stack.cloud.liveMachines()
        : stack.ec2
          ? (await stack.ec2.instances())
              .filter((i) => EC2_LIVE_STATES.has(i.state))
              .map((i) => ({ pool_id: i.tags["edgerunner:pool-id"] ?? "", name: i.tags.Name ?? i.instanceId }))
          : stack.machines();

    // The idle minimum comes up before the first job.
    const minIdleTotal = sc.scaleSets.reduce((n, s) => n + s.minIdle, 0);
    for (let i = 0; ; i++) {
      const idle = (await instances()).filter((x) => x.status === "running" && x.runner_status === "idle").length;
      if (idle >= minIdleTotal) break;
      if (i > 300) throw new Error(`the idle minimum (${minIdleTotal}) did not come up within 30 s`);
      await sleep(100);
    }
    say(`${sc.name}: ${ids.size} scale sets, ${minIdleTotal} idle runners up after ${Date.now() - t0} ms`);
    if (sc.chaos) await sc.chaos(stack);
    intruder = sc.intruder ? await startIntruder(stack) : null;

    // Sample live instances all along: D1 through the API, and the cloud's machines.
    sampler = sampleLive(ids, instances, machines);
    const { maxLive, violations: liveViolations } = sampler;

    // A scale set API scale set's jobs name it (`runs-on: <name>`); the others' ask for its labels.
    const labelsOf = new Map(sc.scaleSets.map((s) => [s.name, s.intake === "scaleset_api" ? [s.name] : s.labels]));
    let queued = 0;
    /** When the coordinator was down (scenario `outage`), and when it answered again. */
    let outage: { downAt: number; upAt: number } | null = null;
    const queueBurst = async (b: number, burst: Record<string, number>) => {
      for (const [set, count] of Object.entries(burst)) {
        await gh.queueJobs({ repository: "octo/app", labels: labelsOf.get(set)!, count, name: `${set}-burst${b}` });
        queued += count;
      }
    };
    const kills: number[] = [];
    for (const [b, burst] of sc.bursts.entries()) {
      const slowCreates = sc.slowCreatesBeforeRestart && sc.restartAfterBursts?.includes(b) && !stack.cloud && !stack.ec2;
      if (slowCreates) await stack.slowCreates(sc.slowCreatesBeforeRestart!);
      if (sc.outage?.burst === b) {
        const downAt = Date.now();
        await coordinator.outage(sc.outage.ms, () => queueBurst(b, burst));
        outage = { downAt, upAt: Date.now() };
        say(`${sc.name}: burst ${b + 1} queued while the coordinator was down ${Math.round((outage.upAt - downAt) / 1000)} s`);
      } else await queueBurst(b, burst);
      say(`${sc.name}: burst ${b + 1}/${sc.bursts.length} queued (${queued} jobs so far)`);
      if (sc.restartAfterBursts?.includes(b)) {
        await sleep(sc.burstGapMs / 2);
        const r0 = Date.now();
        kills.push(r0);
        await coordinator.restart();
        say(`${sc.name}: coordinator killed and restarted on its persisted state (${Date.now() - r0} ms)`);
        if (slowCreates) await stack.slowCreates(null);
      }
      if (b < sc.bursts.length - 1) await sleep(sc.burstGapMs);
    }

    const jobsDeadline = Date.now() + sc.jobsTimeoutMs * slack;
    let jobs = await gh.workflowJobs();
    while (jobs.some((j) => j.status !== "completed") && Date.now() < jobsDeadline) {
      await sleep(250);
      jobs = await gh.workflowJobs();
    }
    const allDoneAt = Date.now();
    const intruded = intruder ? await intruder.stop() : null;
    intruder = null;
    if (intruded) violations.push(...intruded.violations);
    const unfinished = jobs.filter((j) => j.status !== "completed");
    if (unfinished.length)
      violations.push(
        `${unfinished.length} jobs not completed: ${unfinished
          .slice(0, 5)
          .map((j) => `${j.id} ${j.name} ${j.status}`)
          .join(", ")}`,
      );
    say(
      `${sc.name}: ${jobs.length - unfinished.length}/${jobs.length} jobs completed after ${allDoneAt - t0} ms; waiting for the world to settle`,
    );

    // The end state: only the idle minimum left, everywhere.
    const endProblems = async (): Promise<string[]> => {
      const out: string[] = [];
      const [rows, cloud, state] = await Promise.all([instances(), machines(), gh.state()]);
      for (const [id, spec] of ids) {
        const live = rows.filter((r) => r.scale_set_id === id && r.status !== "deleted");
        const notIdle = live.filter((r) => !(r.status === "running" && r.runner_status === "idle"));
        if (notIdle.length)
          out.push(
            `${spec.name}: D1 instances neither deleted nor idle: ${notIdle.map((r) => `${r.name} ${r.status}/${r.runner_status}`).join(", ")}`,
          );
        if (live.length !== spec.minIdle) out.push(`${spec.name}: ${live.length} live D1 instances, idle minimum is ${spec.minIdle}`);
        const pool = cloud.filter((m) => m.pool_id === id);
        if (pool.length !== spec.minIdle) out.push(`${spec.name}: ${pool.length} machines in the cloud, idle minimum is ${spec.minIdle}`);
      }
      const idleNames = new Set(rows.filter((r) => r.status === "running" && r.runner_status === "idle").map((r) => r.name));
      const extraRunners = state.runners.filter((r) => !idleNames.has(r.name) || r.busy || r.status !== "online");
      if (extraRunners.length)
        out.push(
          `GitHub runners beyond the idle minimum: ${extraRunners.map((r) => `${r.name} ${r.status}${r.busy ? " busy" : ""}`).join(", ")}`,
        );
      if (state.runners.length !== minIdleTotal) out.push(`${state.runners.length} runners at GitHub, idle minimum is ${minIdleTotal}`);
      return out;
    };
    const settleDeadline = Date.now() + sc.settleTimeoutMs * slack;
    let problems = await retrying(endProblems);
    while (problems.length && Date.now() < settleDeadline) {
      await sleep(500);
      problems = await retrying(endProblems);
    }
    const settledAt = Date.now();
    await gh.settleDeliveries();
    await sampler.stop();
    violations.push(...problems, ...liveViolations);

    // Every job exactly once, on a runner the coordinator created.
    const rows = await instances();
    const created = new Set(rows.map((r) => r.name));
    jobs = await gh.workflowJobs();
    for (const j of jobs) {
      if (j.completions !== 1) violations.push(`job ${j.id} reported done ${j.completions} times`);
      if (j.runner_name !== null && !created.has(j.runner_name))
        violations.push(`job ${j.id} ran on ${j.runner_name}, not a runner the coordinator created`);
    }
    let machinesCreated: number;
    let createCalls: number;
    /** Creates (by instance) the simulator was still working on when a kill came. */
    let createsCutOff: number | null = null;
    if (stack.ec2) {
      // Every instance EC2 ever launched (terminated ones stay listed), and the shim's create calls as the coordinator made them.
      machinesCreated = (await stack.ec2.instances()).length;
      createCalls = (await stack.ec2.account.requests()).filter((r) => r.action === "RunInstances" && r.status === 200).length;
    } else if (stack.cloud) {
      ({ machines: machinesCreated, createCalls } = await stack.cloud.created());
    } else {
      const requests = (await (await fetch(`${w.shimControl}/requests`)).json()) as RecordedRequest[];
      // A batch create counts once per instance in it.
      const asked = createsAsked(requests);
      machinesCreated = new Set(asked.filter((c) => c.status === 201).map((c) => c.name)).size;
      createCalls = asked.length;
      const cutOff = (r: RecordedRequest) => kills.some((k) => r.at < k && (r.answered_at === undefined || r.answered_at > k));
      createsCutOff = createsAsked(requests.filter(cutOff)).length;
    }
    if (machinesCreated > jobs.length + minIdleTotal)
      violations.push(`${machinesCreated} machines created for ${jobs.length} jobs + ${minIdleTotal} idle minimum`);
    if (sampler.samples() < 10) violations.push(`only ${sampler.samples()} samples of live instances`);
    const extra = sc.check ? await sc.check(stack, ids) : { violations: [], summary: {} };
    violations.push(...extra.violations);

    const waits = jobs
      .filter((j) => j.in_progress_at !== null)
      .map((j) => j.in_progress_at! - j.queued_at)
      .sort((a, b) => a - b);
    const deliveries = await gh.webhookDeliveries();
    // Jobs whose `queued` never reached the coordinator: dropped by GitHub, or queued while it was down.
    const droppedQueued = new Set(deliveries.filter((d) => d.dropped && d.action === "queued").map((d) => d.job_id));
    const whileDown = outage ? jobs.filter((j) => j.queued_at >= outage!.downAt && j.queued_at <= outage!.upAt) : [];
    const lastInProgress = (js: typeof jobs) => Math.max(...js.map((j) => j.in_progress_at ?? Number.POSITIVE_INFINITY));
    const recovery = {
      dropped_deliveries: deliveries.filter((d) => d.dropped).length,
      dropped_queued_jobs: droppedQueued.size,
      dropped_queued_to_in_progress_s: (() => {
        const w = jobs.filter((j) => droppedQueued.has(j.id) && j.in_progress_at !== null).map((j) => j.in_progress_at! - j.queued_at);
        return w.length
          ? {
              p50:
                percentile(
                  w.sort((a, b) => a - b),
                  50,
                )! / 1000,
              max: Math.max(...w) / 1000,
            }
          : null;
      })(),
      ...(outage && {
        outage_s: Math.round((outage.upAt - outage.downAt) / 100) / 10,
        jobs_queued_while_down: whileDown.length,
        // The figure issue 36 asks for: from the coordinator answering again to the last of those jobs on a runner.
        answering_again_to_last_in_progress_s: whileDown.length ? Math.round((lastInProgress(whileDown) - outage.upAt) / 100) / 10 : null,
      }),
    };
    const summary = {
      scenario: sc.name,
      ok: violations.length === 0,
      jobs: jobs.length,
      completed: jobs.filter((j) => j.status === "completed").length,
      instances_created: machinesCreated,
      ...(createsCutOff !== null && kills.length > 0 && { creates_cut_off_by_kills: createsCutOff }),
      d1_instances: rows.length,
      create_calls: createCalls,
      max_live: Object.fromEntries([...ids].map(([id, s]) => [s.name, { ...maxLive.get(id)!, max_runners: s.max }])),
      queued_to_in_progress_ms: { p50: percentile(waits, 50), p99: percentile(waits, 99), max: waits.at(-1) ?? null },
      webhook_deliveries: deliveries.length,
      webhook_attempts: deliveries.reduce((n, d) => n + d.attempts, 0),
      ...((recovery.dropped_deliveries > 0 || outage) && { recovery }),
      github_requests: (await gh.requests()).length,
      samples: sampler.samples(),
      all_jobs_done_s: Math.round((allDoneAt - t0) / 100) / 10,
      settled_s: Math.round((settledAt - t0) / 100) / 10,
      ...extra.summary,
      ...(intruded && { intruder: { forged: intruded.forged, answers: intruded.answers } }),
      violations,
    };
    return { ok: violations.length === 0, summary, violations };
  } finally {
    await sampler?.stop();
    await intruder?.stop().catch(() => {});
    await stack.stop();
  }
}
