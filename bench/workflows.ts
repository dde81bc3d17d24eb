/**
 * npm run bench:workflows [-- --latency-jobs 50 --burst|--jobs 1000 --profile loopback|production --shim sync|async --shim-batch N
 *   --jit on_boot|before_create] (--quick: --latency-jobs 10 --burst 100)
 *
 * The whole product on one machine (e2e/stack.ts: the coordinator under `wrangler dev`, the fake
 * GitHub playing workflows, the simulator with instant boots), measured from GitHub's side:
 *
 *  - queued_to_in_progress: jobs queued one at a time (each after the last one started) on a
 *    scale set with no idle runners: the time from GitHub queuing a job (its `queued` webhook
 *    going out) to a runner the coordinator created for it taking it. The whole path: webhook,
 *    nudge, reconcile, JIT config, shim create, bootstrap (metadata, status callbacks), runner
 *    online, job assigned. `queued_to_create` is the part up to the shim's create request.
 *  - scaleset_api: the same for a scale set fed by GitHub's runner scale set API (jobs
 *    `runs-on: <its name>`): queue message, acquire, assignment message, reconcile, the scale
 *    set's JIT config, shim create, … (the fake answers a long poll as soon as a message arrives).
 *  - burst: --burst jobs queued at once on one scale set with room for all of them: the time
 *    until every job is in progress (and completed), and the coordinator's calls to GitHub per
 *    runner, counted by the fake GitHub once the world has settled.
 *
 * --profile production (e2e/profiles.ts): GitHub's latency and secondary limits, a ~1 s shim
 * create (--shim async: 202 and a callback after ~1 s), six outbound calls per scale set object.
 * The burst then also reports the time until every create was sent, the floor GitHub's points
 * limit alone sets for its JIT calls, and the secondary-limit answers the coordinator provoked.
 * `shim_create_requests` counts the create requests the shim got (one per machine, or one per
 * batch: --shim-batch 0 makes the simulator a v1 shim without batch create), and
 * `shim_create_requests_wall_s` the time from the first sent to the last answered.
 *
 * BENCH_LOG_LEVEL=warn runs the coordinator without its info lines (what logging costs);
 * BENCH_LOCAL_OBSERVABILITY=on with wrangler dev's local trace collector (off by default, see below);
 * BENCH_CPU_PROFILE=file.cpuprofile also records a CPU profile of the coordinator's isolate over
 * the burst (open the file in Chrome DevTools) and prints its summary (bench/cpu-profile.ts);
 * BENCH_PERF=file.data records the workerd process with Linux perf over the burst and prints how
 * its CPU splits into local trace collection, SQLite, the kernel and the rest (bench/perf-split.ts).
 * --jit: the webhook scale sets' jit_config_timing (default on_boot, the product's default: each
 * machine mints its JIT config on its first credentials fetch; before_create: the object mints
 * it before the shim create).
 *
 * Prints one JSON document on stdout; progress on stderr.
 */
import { appendFileSync, copyFileSync, writeFileSync } from "node:fs";
import { JIT_PER_MINUTE, profileFromArgs } from "../e2e/profiles.ts";
import { startStack } from "../e2e/stack.ts";
import { DEFAULT_BATCH_CREATE_MAX } from "../shims/simulator/simulator.ts";
import { DEFAULT_GITHUB_BUDGET } from "../src/github/budget.ts";
import type { RecordedRequest } from "../test/fake-github/types.ts";
import { createsAsked } from "../test/fake-shim/requests.ts";
import type { RecordedRequest as ShimRequest } from "../test/fake-shim/types.ts";
import { bundlePath, moduleResolver, openProfiler, summarizeProfile } from "./cpu-profile.ts";
import { freePort, note, percentile, sleep } from "./harness.mjs";
import { PERF_CATEGORIES, recordPerf, workerdPid } from "./perf-split.ts";

function flags(argv: string[]) {
  const out = { latencyJobs: 50, burst: 1000, jit: "on_boot" as "on_boot" | "before_create" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--jit") {
      const timing = argv[++i];
      if (timing !== "on_boot" && timing !== "before_create") throw new Error("--jit takes on_boot or before_create");
      out.jit = timing;
      continue;
    }
    if (a === "--quick") {
      // What `npm run bench -- --quick` runs: a smoke run, not figures to quote.
      Object.assign(out, { latencyJobs: 10, burst: 100 });
      continue;
    }
    const v = Number(argv[++i]);
    if (!Number.isInteger(v) || v < 1) throw new Error(`${a} takes a positive integer`);
    if (a === "--latency-jobs") out.latencyJobs = v;
    else if (a === "--burst" || a === "--jobs") out.burst = v;
    else throw new Error(`unknown flag ${a}`);
  }
  return out;
}

const { profile, rest } = profileFromArgs(process.argv.slice(2));
// wrangler dev's local observability streams every invocation's logs and spans to a collector
// Worker in the coordinator's own workerd (~15 % of its CPU): wrangler's, not the Worker's, so
// off unless BENCH_LOCAL_OBSERVABILITY=on (docs/performance.md: Coordinator CPU per runner).
const localObservability = process.env.BENCH_LOCAL_OBSERVABILITY === "on";
const opts = flags(rest);
const limited = profile.github?.secondary !== undefined;

const stack = await startStack({
  profile,
  vars: {
    // Reconciles come from nudges; the periodic tick only tidies up.
    RECONCILE_INTERVAL_SECONDS: "5",
    SCALE_DOWN_IDLE_SECONDS: "5",
    ORPHAN_CHECK_SECONDS: "600",
    ...(process.env.BENCH_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {}),
  },
  inspectorPort: process.env.BENCH_CPU_PROFILE ? await freePort() : undefined,
  localObservability,
  sim: { boot_delay_ms: 0, job_ms: 200, poll_ms: 20 },
  // BENCH_LOG=file keeps the coordinator's log.
  coordinatorLog: process.env.BENCH_LOG,
  // BENCH_MACHINE_LOG=file keeps what the simulated machines did (booted, failed, ran a job).
  log: process.env.BENCH_MACHINE_LOG
    ? (line) => appendFileSync(process.env.BENCH_MACHINE_LOG!, `${JSON.stringify({ ts: new Date().toISOString(), ...line })}\n`)
    : undefined,
});
const { coordinator, gh, w } = stack;

const scaleSet = (name: string, max: number, intake: "webhook" | "scaleset_api" = "webhook") =>
  coordinator.api("POST", `/repositories/${w.repo.id}/scalesets`, {
    name,
    intake,
    provider_name: w.provider,
    labels: ["self-hosted", "linux", name],
    max_runners: max,
    min_idle_runners: 0,
    image: "ubuntu:24.04",
    flavor: "small",
    ...(intake === "webhook" && { jit_config_timing: opts.jit }),
  });

/** Waits until `done` holds for the jobs named `name`, polling the fake GitHub; `partial`: at the deadline, returns them as they are. */
async function waitJobs(
  name: string,
  done: (j: Awaited<ReturnType<typeof gh.workflowJobs>>[number]) => boolean,
  timeoutMs: number,
  what?: string,
  partial = false,
) {
  const deadline = Date.now() + timeoutMs;
  let said = Date.now();
  for (;;) {
    const jobs = (await gh.workflowJobs()).filter((j) => j.name === name);
    if (jobs.length && jobs.every(done)) return jobs;
    if (what && Date.now() - said > 10_000) {
      said = Date.now();
      note(`${name}: ${jobs.filter(done).length} of ${jobs.length} ${what}`);
    }
    if (Date.now() > deadline && partial) {
      note(
        `${name}: gave up waiting: ${jobs.filter((j) => !done(j)).length} of ${jobs.length} jobs not ${what ?? "done"} after ${timeoutMs} ms`,
      );
      return jobs;
    }
    if (Date.now() > deadline)
      throw new Error(`${name}: ${jobs.filter((j) => !done(j)).length} of ${jobs.length} jobs not there after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** The coordinator's GitHub REST calls, by operation (runner sessions are the simulator's, never counted). */
/** The coordinator's GitHub budget window (its default). */
const BUDGET_WINDOW_MS = DEFAULT_GITHUB_BUDGET.windowMs;

/** The most secondary-limit points (mutations 5, reads 1) that arrived within any 60 s. */
function busiestMinutePoints(reqs: RecordedRequest[]): number {
  const arrivals = reqs.map((r) => ({ at: r.arrived_at, points: ["GET", "HEAD"].includes(r.method) ? 1 : 5 })).sort((a, b) => a.at - b.at);
  let best = 0;
  let sum = 0;
  for (let head = 0, tail = 0; head < arrivals.length; head++) {
    sum += arrivals[head]!.points;
    while (arrivals[head]!.at - arrivals[tail]!.at >= 60_000) sum -= arrivals[tail++]!.points;
    best = Math.max(best, sum);
  }
  return best;
}

/** Calls let in per budget window (by arrival): the five busiest, with how far into the window the first and last arrived. */
function busiestWindows(reqs: RecordedRequest[]) {
  const windows = new Map<number, number[]>();
  for (const r of reqs) {
    const start = r.arrived_at - (r.arrived_at % BUDGET_WINDOW_MS);
    windows.set(start, [...(windows.get(start) ?? []), r.arrived_at - start]);
  }
  return [...windows.entries()]
    .sort((a, b) => b[1].length - a[1].length)
    .slice(0, 5)
    .map(([start, offsets]) => ({
      window_start: start,
      calls: offsets.length,
      first_ms: Math.min(...offsets),
      last_ms: Math.max(...offsets),
    }));
}

function byOperation(reqs: RecordedRequest[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of reqs) {
    const op = `${r.method} ${r.path.replace(/\/\d+(?=\/|$)/g, "/{id}").replace(/^\/repos\/[^/]+\/[^/]+/, "/repos/{repo}")}`;
    out[op] = (out[op] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(out).sort(([, a], [, b]) => b - a));
}

/** The workerd CPU per runner, shared out as perf's samples are. */
function splitPerRunner(
  split: Record<(typeof PERF_CATEGORIES)[number], number> & { samples: number },
  cpuSeconds: number,
  runners: number,
) {
  const perRunner = (n: number) => Math.round(((cpuSeconds * 1000 * n) / split.samples / runners) * 10) / 10;
  return {
    ...Object.fromEntries(PERF_CATEGORIES.map((c) => [c, perRunner(split[c])])),
    samples: split.samples,
    note: "perf stack samples of workerd: tail_stream = wrangler dev's trace collection, sqlite = local D1 and the objects' storage (bench/perf-split.ts)",
  };
}

/** The profile's summary, every figure per runner: the coordinator's JavaScript apart from D1 and workerd's own work. */
function isolateProfile(profile: Parameters<typeof summarizeProfile>[0], runners: number, bundleDir: string) {
  const sum = summarizeProfile(profile, moduleResolver(bundleDir));
  const per = (ms: number) => Math.round((ms / runners) * 100) / 100;
  const perAll = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, per(v)]));
  return {
    busy_ms_per_runner: per(sum.busy_ms),
    gc_ms_per_runner: per(sum.gc_ms),
    program_ms_per_runner: per(sum.program_ms),
    by_module_ms_per_runner: perAll(sum.by_module),
    top_functions_ms_per_runner: perAll(sum.top_functions),
    inclusive_src_ms_per_runner: perAll(sum.inclusive_src),
    sampled_s: Math.round(sum.sampled_ms / 100) / 10,
    note: "self time sampled in the coordinator's isolate (Worker and objects; not local D1), DevTools protocol",
  };
}

try {
  const result: Record<string, unknown> = {};

  // --- queued → create and → in progress, one job at a time, no idle runners, in each intake mode ---
  // Each machine asked for, a batch create counting once per instance in it.
  const shimCreates = async () => createsAsked((await (await fetch(`${w.shimControl}/requests`)).json()) as ShimRequest[]);
  async function latency(name: string, intake: "webhook" | "scaleset_api") {
    const ss = (await scaleSet(name, 10, intake)) as { id: string };
    const labels = intake === "scaleset_api" ? [name] : ["self-hosted", "linux", name];
    // GitHub only takes jobs for a runner scale set once it exists: wait for the listener's session.
    for (let i = 0; intake === "scaleset_api"; i++) {
      const shown = (await coordinator.api("GET", `/scalesets/${ss.id}`)) as { status: { listener: { session_open: boolean } | null } };
      if (shown.status.listener?.session_open) break;
      if (i > 300) throw new Error(`${name}: no scale set API session after 30 s`);
      await sleep(100);
    }
    const warmup = 3;
    const waits: number[] = [];
    const creates: number[] = [];
    note(`${intake}: queued → in progress: ${warmup} warm-up jobs, then ${opts.latencyJobs}`);
    for (let i = 0; i < warmup + opts.latencyJobs; i++) {
      const jobName = `${name}-${i}`;
      await gh.queueJobs({ repository: "octo/app", labels, name: jobName });
      const [job] = await waitJobs(jobName, (j) => j.in_progress_at !== null, 60_000);
      if (i < warmup) continue;
      waits.push(job!.in_progress_at! - job!.queued_at);
      const create = (await shimCreates()).find((r) => r.pool_id === ss.id && r.at >= job!.queued_at);
      if (create) creates.push(create.at - job!.queued_at);
    }
    waits.sort((a, b) => a - b);
    creates.sort((a, b) => a - b);
    return {
      queued_to_create: {
        jobs: creates.length,
        p50_ms: percentile(creates, 50),
        p99_ms: percentile(creates, 99),
        max_ms: creates.at(-1) ?? null,
      },
      queued_to_in_progress: {
        jobs: waits.length,
        boot_delay_ms: 0,
        p50_ms: percentile(waits, 50),
        p99_ms: percentile(waits, 99),
        max_ms: waits.at(-1) ?? null,
      },
    };
  }
  const webhook = await latency("latency", "webhook");
  result.queued_to_in_progress = webhook.queued_to_in_progress;
  result.queued_to_create = { webhook: webhook.queued_to_create };
  const pulled = await latency("latency-pull", "scaleset_api");
  (result.queued_to_create as Record<string, unknown>).scaleset_api = pulled.queued_to_create;
  result.scaleset_api = { queued_to_in_progress: pulled.queued_to_in_progress };

  // Let the latency runners finish and go, so the burst starts from an empty world.
  for (let i = 0; i < 600 && (await stack.machines()).length; i++) await sleep(100);
  if (limited) {
    // ...and from a fresh minute of GitHub points, so the burst's floor is the one printed.
    note("waiting 60 s for GitHub's points window to clear");
    await sleep(61_000);
  }

  // --- burst ---
  await scaleSet("burst", opts.burst);
  await gh.clearRequests();
  const shimRequestsBefore = ((await (await fetch(`${w.shimControl}/requests`)).json()) as unknown[]).length;
  note(`burst: ${opts.burst} jobs queued at once`);
  const profiler = stack.coordinator.inspectorPort ? await openProfiler(stack.coordinator.inspectorPort) : null;
  await profiler?.start();
  const perfPid = process.env.BENCH_PERF ? workerdPid(stack.coordinator.processGroup()!) : null;
  if (process.env.BENCH_PERF && !perfPid) throw new Error("BENCH_PERF: no workerd found");
  const perf = perfPid ? recordPerf(perfPid, process.env.BENCH_PERF!) : null;
  const t0 = Date.now();
  const cpuBefore = stack.coordinator.cpuSeconds();
  await gh.queueJobs({ repository: "octo/app", labels: ["self-hosted", "linux", "burst"], count: opts.burst, name: "burst" });
  const floorS = limited ? (opts.burst / JIT_PER_MINUTE) * 60 : null;
  const timeout = Math.max(600_000, (floorS ?? 0) * 2000);
  // A run that does not finish still reports what it saw (with how many jobs never got there).
  const burstJobs = await waitJobs("burst", (j) => j.in_progress_at !== null, timeout, "in progress", true);
  const started = burstJobs.filter((j) => j.in_progress_at !== null);
  const firstQueued = Math.min(...burstJobs.map((j) => j.queued_at));
  const allStarted = Math.max(...started.map((j) => j.in_progress_at!));
  note(`burst: ${started.length} of ${opts.burst} in progress after ${allStarted - firstQueued} ms`);
  const completed = (
    await waitJobs("burst", (j) => j.status === "completed", started.length === burstJobs.length ? timeout : 1, "completed", true)
  ).filter((j) => j.status === "completed");
  const allCompleted = Math.max(...completed.map((j) => j.completed_at!));
  // Settled: every machine gone, so every removal the coordinator makes at GitHub is counted.
  for (let i = 0; i < 1200 && (await stack.machines()).length; i++) await sleep(250);
  const left = (await stack.machines()).length;
  // The coordinator's CPU over the whole burst (webhooks, object passes, bootstrap routes, deletes), per runner.
  const cpuAfter = stack.coordinator.cpuSeconds();
  const perfSplit = await perf?.stop();
  const cpuProfile = await profiler?.stop();
  profiler?.close();
  if (cpuProfile) {
    writeFileSync(process.env.BENCH_CPU_PROFILE!, JSON.stringify(cpuProfile));
    // The bundle the profile's lines refer to, for `node bench/cpu-profile.ts <profile> <bundle>` later.
    const bundle = bundlePath(stack.coordinator.work);
    if (bundle) copyFileSync(bundle, `${process.env.BENCH_CPU_PROFILE}.bundle.js`);
  }
  const shimRequests = ((await (await fetch(`${w.shimControl}/requests`)).json()) as ShimRequest[]).slice(shimRequestsBefore);
  const asked = createsAsked(shimRequests);
  const runnersCreated = new Set(asked.filter((c) => c.status !== null && c.status < 300).map((c) => c.name)).size;
  // The create requests themselves (one per machine, or one per batch): how many, and from the first sent to the last answered.
  const createRequests = shimRequests.filter((r) => r.operation === "create" || r.operation === "create_batch");
  const createRequestsWall = createRequests.length
    ? Math.max(...createRequests.map((r) => r.answered_at ?? r.at)) - Math.min(...createRequests.map((r) => r.at))
    : null;
  const ghRequests = await gh.requests();
  const startWaits = started.map((j) => j.in_progress_at! - j.queued_at).sort((a, b) => a - b);
  const seconds = (ms: number) => Math.round(ms / 100) / 10;
  // The time by which the shim had been asked for as many machines as there were jobs.
  const createTimes = asked.map((c) => c.at).sort((a, b) => a - b);
  const creates = createTimes.length >= opts.burst ? createTimes[opts.burst - 1]! : null;
  const refused = ghRequests.filter((r) => r.status === 403 || r.status === 429);
  const ops = byOperation(ghRequests);
  result.burst = {
    profile: profile.name,
    shim: profile.shim,
    jit_config_timing: opts.jit,
    jobs: opts.burst,
    boot_delay_ms: 0,
    all_creates_sent_s: creates === null ? null : seconds(creates - firstQueued),
    all_in_progress_s: started.length === opts.burst ? seconds(allStarted - firstQueued) : null,
    jobs_in_progress: started.length,
    last_in_progress_s: seconds(allStarted - firstQueued),
    all_completed_s: completed.length === opts.burst ? seconds(allCompleted - firstQueued) : null,
    jobs_completed: completed.length,
    queued_to_in_progress: { p50_ms: percentile(startWaits, 50), p99_ms: percentile(startWaits, 99), max_ms: startWaits.at(-1) ?? null },
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
    // What GitHub's points limit alone allows one credential: jobs JIT configs at JIT_PER_MINUTE a minute.
    github_floor_s: floorS === null ? null : Math.round(floorS * 10) / 10,
    all_in_progress_over_floor:
      floorS && started.length === opts.burst ? Math.round(((allStarted - firstQueued) / 1000 / floorS) * 100) / 100 : null,
    github_rate_limited_answers: {
      total: refused.length,
      secondary_points: refused.filter((r) => r.secondary_limit === "points").length,
      secondary_concurrency: refused.filter((r) => r.secondary_limit === "concurrency").length,
      other: refused.filter((r) => !r.secondary_limit).length,
      // Why, when there are any: GitHub counts arrivals, so the busiest 60 s of arrivals it let in
      // (900 is its limit), and where in the coordinator's budget window each refused one arrived.
      ...(refused.length && {
        busiest_minute_points: busiestMinutePoints(ghRequests.filter((r) => !r.secondary_limit)),
        busiest_budget_windows: busiestWindows(ghRequests.filter((r) => !r.secondary_limit)),
        refused_at_window_offset_ms: refused.map((r) => r.arrived_at % BUDGET_WINDOW_MS),
      }),
    },
    // A workerd restarted meanwhile (wrangler dev rebuilds when a source file changes) counts from zero: no figure.
    coordinator_cpu_ms_per_runner:
      cpuBefore && cpuAfter && runnersCreated && String(cpuBefore.workerdPids) === String(cpuAfter.workerdPids)
        ? {
            workerd: Math.round(((cpuAfter.workerd - cpuBefore.workerd) * 1000 * 10) / runnersCreated) / 10,
            wrangler_dev_proxy: Math.round(((cpuAfter.wrangler - cpuBefore.wrangler) * 1000 * 10) / runnersCreated) / 10,
            local_observability: localObservability ? "on" : "off",
            log_level: process.env.BENCH_LOG_LEVEL ?? "info",
            note: "user+system CPU of the processes under wrangler dev, from /proc; target ≤ 10 ms (workerd)",
          }
        : null,
    workerd_cpu_split_ms_per_runner:
      perfSplit && cpuBefore && cpuAfter && runnersCreated
        ? splitPerRunner(perfSplit, cpuAfter.workerd - cpuBefore.workerd, runnersCreated)
        : undefined,
    coordinator_isolate_profile:
      cpuProfile && runnersCreated ? isolateProfile(cpuProfile, runnersCreated, stack.coordinator.work) : undefined,
    wall_s: Math.round((Date.now() - t0) / 100) / 10,
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  await stack.stop();
}
