/**
 * npm run bench:workflows [-- --latency-jobs 50 --burst|--jobs 1000 --credentials 1 --bursts 1000x1,250x1,1000x2
 *   --scaleset-api-burst N --profile loopback|production --shim sync|async --shim-batch N --jit on_boot|before_create]
 *   (--quick: --latency-jobs 10 --burst 100)
 *
 * The whole product on one machine (e2e/stack.ts: the coordinator under `wrangler dev`, the fake
 * GitHub playing workflows, the simulator's machines booting as the profile says: at once on
 * loopback, in ~20 s in production), measured from GitHub's side:
 *
 *  - queued_to_in_progress: jobs queued one at a time (each after the last one started) on a
 *    scale set with no idle runners: the time from GitHub queuing a job (its `queued` webhook
 *    going out) to a runner the coordinator created for it taking it. The whole path: webhook,
 *    nudge, reconcile, JIT config, shim create, the machine's boot (`boot_delay_ms`), bootstrap
 *    (metadata, status callbacks), runner online, job assigned. `queued_to_create` is the part up
 *    to the shim's create request. 50 jobs by default, 20 in production (each takes a boot).
 *  - scaleset_api: the same for a scale set fed by GitHub's runner scale set API (jobs
 *    `runs-on: <its name>`): queue message, acquire, assignment message, reconcile, the scale
 *    set's JIT config, shim create, … (the fake answers a long poll as soon as a message arrives).
 *  - burst (bench/burst.ts): --burst jobs queued at once on one scale set with room for all of
 *    them: the time until every create was sent, every machine configured (it holds its JIT
 *    config) and every job in progress and completed; the booted-waiting share and the creates
 *    outstanding at the peak (bench/burst-figures.ts, from the simulator's machine timelines);
 *    the coordinator's calls to GitHub per runner, counted by the fake GitHub once the world has
 *    settled; its CPU per runner. --credentials N gives the repository a pool of N credentials
 *    (bench/credential-pool.ts). --bursts JOBSxCREDENTIALS,… runs several bursts one after the
 *    other on the same stack, each on its own scale set (`burst` is the first, `bursts` all of
 *    them); --scaleset-api-burst N adds one on a scale set API scale set (`scaleset_api_burst`).
 *
 * --profile production (e2e/profiles.ts): GitHub's latency and secondary limits, a ~1 s shim
 * create (--shim async: 202 and a callback after ~1 s), six outbound calls per scale set object,
 * machines booting in ~20 s. A burst then also reports the floor GitHub's points limit sets for
 * its JIT calls (per credential of the pool) and the secondary-limit answers the coordinator
 * provoked; each burst starts with GitHub's points window clear (a 61 s wait before it).
 * `shim_create_requests` counts the create requests the shim got (one per machine, or one per
 * batch: --shim-batch 0 makes the simulator a v1 shim without batch create), and
 * `shim_create_requests_wall_s` the time from the first sent to the last answered.
 *
 * BENCH_LOG_LEVEL=warn runs the coordinator without its info lines (what logging costs);
 * BENCH_LOCAL_OBSERVABILITY=on with wrangler dev's local trace collector (off by default, see below);
 * BENCH_CPU_PROFILE=file.cpuprofile also records a CPU profile of the coordinator's isolate over
 * the first burst (open the file in Chrome DevTools) and prints its summary (bench/cpu-profile.ts);
 * BENCH_PERF=file.data records the workerd process with Linux perf over the first burst and prints
 * how its CPU splits into local trace collection, SQLite, the kernel and the rest (bench/perf-split.ts).
 * --jit: the webhook scale sets' jit_config_timing (default on_boot, the product's default: each
 * machine mints its JIT config on its first credentials fetch; before_create: the object mints
 * it before the shim create).
 *
 * Prints one JSON document on stdout; progress on stderr.
 */
import { appendFileSync } from "node:fs";
import { profileFromArgs } from "../e2e/profiles.ts";
import { startStack } from "../e2e/stack.ts";
import { createScaleSet, type JitTiming, shimCreates, waitJobs, waitMachinesGone } from "./bench-world.ts";
import { type BurstPlan, runBurst } from "./burst.ts";
import { credentialPool } from "./credential-pool.ts";
import { freePort, note, percentile, sleep } from "./harness.mjs";

const positive = (flag: string, v: string | undefined) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} takes a positive integer`);
  return n;
};

function flags(argv: string[]) {
  const out = {
    latencyJobs: null as number | null,
    burst: 1000,
    credentials: 1,
    bursts: null as { jobs: number; credentials: number }[] | null,
    scalesetApiBurst: 0,
    jit: "on_boot" as JitTiming,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--jit") {
      const timing = argv[++i];
      if (timing !== "on_boot" && timing !== "before_create") throw new Error("--jit takes on_boot or before_create");
      out.jit = timing;
    } else if (a === "--quick") {
      // What `npm run bench -- --quick` runs: a smoke run, not figures to quote.
      Object.assign(out, { latencyJobs: 10, burst: 100 });
    } else if (a === "--bursts") {
      const spec = argv[++i] ?? "";
      out.bursts = spec.split(",").map((part) => {
        const m = /^(\d+)x(\d+)$/.exec(part.trim());
        if (!m || Number(m[1]) < 1 || Number(m[2]) < 1)
          throw new Error(`--bursts takes JOBSxCREDENTIALS,… (e.g. 1000x1,250x1,1000x2), not ${JSON.stringify(spec)}`);
        return { jobs: Number(m[1]), credentials: Number(m[2]) };
      });
    } else if (a === "--scaleset-api-burst") {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 0) throw new Error("--scaleset-api-burst takes a whole number of jobs (0: none)");
      out.scalesetApiBurst = v;
    } else if (a === "--latency-jobs") out.latencyJobs = positive(a, argv[++i]);
    else if (a === "--burst" || a === "--jobs") out.burst = positive(a, argv[++i]);
    else if (a === "--credentials") out.credentials = positive(a, argv[++i]);
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
// Each latency job waits for a machine's boot: fewer of them where boots take ~20 s.
const latencyJobs = opts.latencyJobs ?? (profile.name === "production" ? 20 : 50);
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
  // The machines boot as the profile says (instant on loopback, ~20 s in production).
  sim: { job_ms: 200, poll_ms: 20 },
  // BENCH_LOG=file keeps the coordinator's log.
  coordinatorLog: process.env.BENCH_LOG,
  // BENCH_MACHINE_LOG=file keeps what the simulated machines did (booted, failed, ran a job).
  log: process.env.BENCH_MACHINE_LOG
    ? (line) => appendFileSync(process.env.BENCH_MACHINE_LOG!, `${JSON.stringify({ ts: new Date().toISOString(), ...line })}\n`)
    : undefined,
});
const { gh } = stack;

/** Lets the last runners finish and go, then (under GitHub's limits) waits out its points window, so a burst starts from an empty world. */
async function quietWorld() {
  await waitMachinesGone(stack, 60_000);
  if (limited) {
    note("waiting 61 s for GitHub's points window to clear");
    await sleep(61_000);
  }
}

try {
  const result: Record<string, unknown> = {};

  // --- queued → create and → in progress, one job at a time, no idle runners, in each intake mode ---
  async function latency(name: string, intake: "webhook" | "scaleset_api") {
    const ss = await createScaleSet(stack, name, 10, intake, opts.jit);
    const labels = intake === "scaleset_api" ? [name] : ["self-hosted", "linux", name];
    const warmup = 3;
    const waits: number[] = [];
    const creates: number[] = [];
    note(`${intake}: queued → in progress: ${warmup} warm-up jobs, then ${latencyJobs}`);
    for (let i = 0; i < warmup + latencyJobs; i++) {
      const jobName = `${name}-${i}`;
      await gh.queueJobs({ repository: "octo/app", labels, name: jobName });
      const [job] = await waitJobs(stack, jobName, (j) => j.in_progress_at !== null, 60_000 + 2 * stack.sim.config.boot_delay_ms);
      if (i < warmup) continue;
      waits.push(job!.in_progress_at! - job!.queued_at);
      const create = (await shimCreates(stack)).find((r) => r.pool_id === ss.id && r.at >= job!.queued_at);
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
        // The boot is part of it: queued → create, the create, the boot, the bootstrap.
        boot_delay_ms: stack.sim.config.boot_delay_ms,
        boot_jitter: stack.sim.config.boot_jitter,
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

  // --- bursts, one after the other on the same stack, each on a scale set of its own ---
  const webhookBursts = opts.bursts ?? [{ jobs: opts.burst, credentials: opts.credentials }];
  const named = new Set<string>();
  const nameFor = (jobs: number, credentials: number, i: number) => {
    // The first keeps the name it always had; the others say what they are.
    const base = i === 0 ? "burst" : `burst-${jobs}x${credentials}`;
    const name = named.has(base) ? `${base}-${i}` : base;
    named.add(name);
    return name;
  };
  const plans: BurstPlan[] = webhookBursts.map((b, i) => ({
    ...b,
    name: nameFor(b.jobs, b.credentials, i),
    intake: "webhook",
    instrument: i === 0,
  }));
  if (opts.scalesetApiBurst)
    plans.push({ name: "burst-scaleset-api", jobs: opts.scalesetApiBurst, credentials: 1, intake: "scaleset_api", instrument: false });
  const pool = credentialPool(stack.coordinator, stack.w, (pats) => gh.seed({ pats }));
  const done: Record<string, unknown>[] = [];
  for (const plan of plans) {
    await quietWorld();
    done.push(await runBurst({ stack, profile, jit: opts.jit, localObservability, pool }, plan));
  }
  const webhookDone = done.filter((b) => b.intake === "webhook");
  result.burst = webhookDone[0];
  if (webhookDone.length > 1) result.bursts = webhookDone;
  const pulledBurst = done.find((b) => b.intake === "scaleset_api");
  if (pulledBurst) result.scaleset_api_burst = pulledBurst;
  console.log(JSON.stringify(result, null, 2));
} finally {
  await stack.stop();
}
