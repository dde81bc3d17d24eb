// Over the house's ~400 lines (~690) on purpose: the scenarios are data (one object each) read by
// one runner whose invariant checks every scenario shares; G, a different world, is e2e/forges.ts,
// and each cloud's world and checks live in e2e/<cloud>-cloud.ts.
/**
 * npm run e2e [-- A|B ...] [--repeat N] [--profile loopback|production] [--shim sync|async]
 *
 * End-to-end scenarios on one machine: the coordinator under `wrangler dev`, the fake GitHub
 * playing workflows, the simulator shim running simulated runners (see e2e/stack.ts). Each
 * scenario queues jobs in bursts, waits until they are done and the world has settled, then
 * checks the invariants, prints a summary (one JSON line on stdout) and fails on any broken one:
 *
 *  - every job completed exactly once, on a runner the coordinator created;
 *  - machines created ≤ jobs + min idle;
 *  - at no time more live instances than max_runners (the coordinator's D1, through its API,
 *    and the simulator's machines, both sampled all along);
 *  - at the end nothing is left in the simulator or at GitHub but the idle minimum, and every
 *    D1 instance is deleted or idle.
 *
 * A: 3 scale sets (one with min_idle_runners > 0), 60 jobs in 4 bursts.
 * B: the same under chaos: every webhook delivered twice and shuffled, and 10 % of workflow_job
 *    deliveries dropped by GitHub (recorded failed, never sent: delivery recovery, at its default
 *    60 s, brings them back); the coordinator unreachable for 60 s during the second burst; 30 % of creates fail and
 *    10 % hang (with batch create, 10 % of batches hang whole); 10 % of deletes fail; 10 % of GitHub calls answer 5xx and one rate-limit window
 *    opens; the coordinator is killed (SIGKILL) and restarted twice mid-run on its persisted state,
 *    each time while the simulator is still making machines (creates take 2.5 s then: each
 *    machine a kill cut off is adopted by its name, never made twice);
 *    and a second repository's holder signs deliveries naming octo/app's job ids (running, queued
 *    and not yet handed out) and runners (e2e/intruder.ts): none may reach octo/app's jobs or runners.
 * S: a scale set in scaleset_api intake (GitHub's runner scale set API: jobs `runs-on: <its name>`,
 *    the coordinator long-polls the fake's Actions service) beside a webhook-fed one, 36 jobs in 3
 *    bursts, the coordinator killed and restarted twice mid-run, inside creates that outlast the restart (4.5 s). Also checked: every scale set API
 *    job went through the queue to completion, and once the scale set is disabled no session is
 *    left open at GitHub.
 * EC2: the EC2 shim Worker (wrangler dev) and the fake EC2, whose instances boot into simulated
 *    runners from their user data: 2 scale sets (spot-with-fallback, on-demand), 24 jobs in 3
 *    bursts, no capacity for the flavor in the first subnet, no spot capacity for it at all, the
 *    account's spot limit hit three times, two throttled launches. Also checked: every fallback
 *    landed where capacity was, every instance carries its tags, and nothing is left running.
 * GCE: the GCE shim Worker and the fake Compute Engine, whose instances boot into simulated
 *    runners (e2e/gce-cloud.ts): 24 jobs in 3 bursts, zone fallback on ZONE_RESOURCE_POOL_EXHAUSTED,
 *    Spot falling back to standard, throttled inserts. Also checked: every instance where there
 *    was capacity, labelled, and deleted at the end.
 * HETZNER: the Hetzner shim Worker and the fake Hetzner Cloud, whose servers boot into simulated
 *    runners (e2e/hetzner-cloud.ts): 24 jobs in 3 bursts, location and server-type fallback, the
 *    project's server limit and rate limit hit. Also checked: every server where there was room,
 *    labelled, and deleted at the end.
 * E: an enterprise scale set whose every delivery fails (an enterprise hook, of which GitHub keeps
 *    no record an API shows): the backstop finds its jobs, 12 in 2 bursts. Also checked: no
 *    delivery reached the coordinator, yet every job was served once.
 * G: a GitHub, a Gitea and a Forgejo scale set side by side (e2e/forges.ts), 60 jobs in 3 bursts,
 *    the coordinator killed and restarted once mid-run; every forge's jobs served once, nothing left.
 * SHAPES: job-shaped runners (e2e/shapes.ts): a shaped scale set on the simulator, one on the EC2
 *    shim Worker and one on the Hetzner shim Worker, 40 jobs each of five shapes (two arm64, one
 *    spot, two images) from 8 runs, each job's label naming its run, and out-of-bounds jobs.
 *    Checked: every job served once on a machine of the flavor and image its shape must get, by
 *    a runner with its own shape label only; one machine per job; the others refused, no machine.
 */
import { percentile, sleep } from "../bench/harness.mjs";
import type { SimulatorConfig } from "../shims/simulator/simulator.ts";
import type { Ec2Faults } from "../test/fake-ec2/types.ts";
import type { DeliveryConfig, Seed } from "../test/fake-github/types.ts";
import { createsAsked } from "../test/fake-shim/requests.ts";
import type { FaultRule, RecordedRequest } from "../test/fake-shim/types.ts";
import type { StartCloud } from "./cloud.ts";
import { EC2_LIVE_STATES } from "./ec2-cloud.ts";
import { runForgesScenario } from "./forges.ts";
import { checkGce, GCE_SCENARIO, gceCloud } from "./gce-cloud.ts";
import { checkHetzner, HETZNER_SCENARIO, hetznerCloud } from "./hetzner-cloud.ts";
import { startIntruder } from "./intruder.ts";
import { type LiveSampler, sampleLive } from "./live-sampler.ts";
import { profileFromArgs, type StackProfile } from "./profiles.ts";
import { runShapesScenario } from "./shapes.ts";
import { type Stack, scenarioLogs, startStack, E2E_TIMINGS as TIMINGS } from "./stack.ts";

interface ScaleSetSpec {
  name: string;
  labels: string[];
  max: number;
  minIdle: number;
  extraSpecs?: Record<string, unknown>;
  /** scaleset_api: fed by the runner scale set API; its jobs say `runs-on: <name>`. */
  intake?: "webhook" | "scaleset_api";
}

interface Scenario {
  name: string;
  vars: Record<string, string>;
  sim: Partial<SimulatorConfig>;
  delivery?: Partial<DeliveryConfig>;
  /** More fields for the simulator's provider registration. */
  provider?: Record<string, unknown>;
  scaleSets: ScaleSetSpec[];
  /** Jobs per scale set in each burst. */
  bursts: Record<string, number>[];
  burstGapMs: number;
  /** Called once the scale sets exist and their idle minimum is up. */
  chaos?: (stack: Stack) => Promise<void>;
  /** Another tenant forges deliveries about this one's jobs and runners until the jobs are done (e2e/intruder.ts). */
  intruder?: boolean;
  /** Restart the coordinator after these bursts (0-based). */
  restartAfterBursts?: number[];
  /**
   * The simulator's creates take this long (ms) while a burst before a restart is queued, so the
   * kill lands inside them; the machines are made all the same, as a cloud finishes what it
   * started. A create cut off so must cost no second machine.
   */
  slowCreatesBeforeRestart?: number;
  /** Take the coordinator down for `ms` and queue this burst (0-based) while it is down. */
  outage?: { burst: number; ms: number };
  /** Its scale sets' entity: the repository (default), or the enterprise `acme` that owns octo (E). */
  entity?: "repository" | "enterprise";
  /** More for the fake GitHub's world before the delivery is configured. */
  githubSeed?: Seed;
  jobsTimeoutMs: number;
  settleTimeoutMs: number;
  /** Run on EC2 (the shim Worker and the fake EC2, with these faults) instead of the simulator shim. */
  ec2?: { faults: Ec2Faults };
  /** Run on another cloud behind its shim Worker (e2e/cloud.ts) instead of the simulator shim. */
  cloud?: (shimLog: string | undefined) => StartCloud;
  /** More invariants, checked once the world has settled. */
  check?: (stack: Stack, ids: Map<string, ScaleSetSpec>) => Promise<{ violations: string[]; summary: Record<string, unknown> }>;
}

const SCALE_SETS: ScaleSetSpec[] = [
  { name: "small", labels: ["self-hosted", "linux", "small"], max: 8, minIdle: 2 },
  { name: "large", labels: ["self-hosted", "linux", "large"], max: 6, minIdle: 0 },
  { name: "gpu", labels: ["self-hosted", "linux", "gpu"], max: 3, minIdle: 0 },
];
const BURSTS = [
  { small: 8, large: 5, gpu: 2 },
  { small: 6, large: 6, gpu: 3 },
  { small: 9, large: 4, gpu: 2 },
  { small: 7, large: 5, gpu: 3 },
];

/** The scale set API scenario's end: disabled, its listener closes the session at GitHub; and every queue job completed. */
async function checkScaleSetApi(stack: Stack, ids: Map<string, ScaleSetSpec>) {
  const violations: string[] = [];
  const before = await stack.gh.actionsState();
  const unfinished = before.jobs.filter((j) => j.state !== "completed");
  if (!before.jobs.length) violations.push("no job went through the runner scale set API");
  if (unfinished.length)
    violations.push(`${unfinished.length} scale set API jobs not completed: ${unfinished.map((j) => `${j.job_id} ${j.state}`).join(", ")}`);
  const pending = Object.values(before.pending_messages).flat();
  if (pending.length) violations.push(`${pending.length} queue messages never acknowledged`);
  for (const [id, spec] of ids)
    if (spec.intake === "scaleset_api") await stack.coordinator.api("PUT", `/scalesets/${id}`, { enabled: false });
  let sessions = before.sessions;
  for (let i = 0; i < 100 && sessions.length; i++) {
    await sleep(200);
    sessions = (await stack.gh.actionsState()).sessions;
  }
  if (sessions.length) violations.push(`${sessions.length} scale set API sessions still open after the scale set was disabled`);
  const acquires = before.requests.filter((r) => r.path.endsWith("/acquirejobs")).length;
  const polls = before.requests.filter((r) => r.path.startsWith("/_actions/_queue/") && r.method === "GET");
  return {
    violations,
    summary: {
      scaleset_api: {
        jobs: before.jobs.length,
        runner_scale_sets: before.scale_sets.length,
        polls: polls.length,
        polls_with_message: polls.filter((r) => r.status === 200).length,
        acquire_calls: acquires,
        sessions_opened: before.requests.filter((r) => r.method === "POST" && r.path.endsWith("/sessions")).length,
        session_conflicts: before.requests.filter((r) => r.path.endsWith("/sessions") && r.status === 409).length,
      },
    },
  };
}

/** E's end: no delivery reached the coordinator, so every job served was found by the backstop. */
async function checkBackstop(stack: Stack) {
  const violations: string[] = [];
  const deliveries = await stack.gh.webhookDeliveries();
  const reached = deliveries.filter((d) => !d.dropped);
  if (reached.length) violations.push(`${reached.length} deliveries reached the coordinator: the backstop was not what served the jobs`);
  return { violations, summary: { backstop: { deliveries_dropped: deliveries.length, deliveries_reached: reached.length } } };
}

const SUBNET_A = "subnet-0aaaaaaaaaaaaaaa1";
const SUBNET_B = "subnet-0bbbbbbbbbbbbbbb2";

/** Which instances the EC2 scenario's faults leave room for, per scale set: anything else is a launch where there was no capacity. */
async function checkEc2(stack: Stack, ids: Map<string, ScaleSetSpec>) {
  const violations: string[] = [];
  const account = stack.ec2!.account;
  const [instances, requests] = await Promise.all([account.instances(), account.requests()]);
  const launches = requests.filter((r) => r.action === "RunInstances");
  const launchedAs: Record<string, number> = {};
  for (const i of instances) {
    const spec = ids.get(i.tags["edgerunner:pool-id"] ?? "");
    if (!spec || !i.tags.Name || i.tags["edgerunner:controller-id"] === undefined) {
      violations.push(`instance ${i.instanceId} lacks its tags: ${JSON.stringify(i.tags)}`);
      continue;
    }
    const as = `${spec.name}: ${i.instanceType} ${i.lifecycle ?? "on-demand"} in ${i.subnetId === SUBNET_A ? "A" : "B"}`;
    launchedAs[as] = (launchedAs[as] ?? 0) + 1;
    if (i.instanceType === "c5.large" && (i.subnetId === SUBNET_A || i.lifecycle === "spot"))
      violations.push(`${i.instanceId} launched as ${as}, where the fake EC2 had no capacity`);
    if (EC2_LIVE_STATES.has(i.state)) violations.push(`${i.instanceId} (${as}) is still ${i.state}`);
  }
  const capacityErrors = launches.filter((r) =>
    ["InsufficientInstanceCapacity", "MaxSpotInstanceCountExceeded"].includes(r.error_code ?? ""),
  ).length;
  const throttled = launches.filter((r) => r.error_code === "RequestLimitExceeded").length;
  if (!capacityErrors) violations.push("no launch hit a capacity error: the fallback was not exercised");
  if (!Object.keys(launchedAs).some((k) => k.startsWith("ec2-spot") && k.includes("on-demand")))
    violations.push("no spot-with-fallback instance fell back to on-demand");
  if (!Object.keys(launchedAs).some((k) => k.includes("m5.large spot"))) violations.push("no spot instance of the second type");
  if (throttled !== 2) violations.push(`${throttled} throttled launches, expected 2`);
  return {
    violations,
    summary: {
      ec2: {
        run_instances_calls: launches.length,
        capacity_errors: capacityErrors,
        throttled,
        instances: instances.length,
        launched_as: launchedAs,
      },
    },
  };
}

const scenarios: Record<string, Scenario> = {
  A: {
    name: "A",
    vars: TIMINGS,
    sim: { boot_delay_ms: 100, job_ms: 400 },
    scaleSets: SCALE_SETS,
    bursts: BURSTS,
    burstGapMs: 3000,
    jobsTimeoutMs: 90_000,
    settleTimeoutMs: 45_000,
  },
  B: {
    name: "B",
    // Straight create failures are expected here: keep creating (the limit is for real outages).
    // Delivery recovery runs at its default, so B measures it as shipped.
    vars: { ...TIMINGS, CREATE_FAILURE_LIMIT: "1000", DELIVERY_RECOVERY_SECONDS: "60" },
    sim: { boot_delay_ms: 100, job_ms: 400 },
    delivery: { duplicate: true, shuffle_ms: 800, drop_probability: 0.1 },
    // The simulator answers a create in milliseconds: a hung one is given up on after 5 s.
    provider: { timeout_seconds: 5 },
    scaleSets: SCALE_SETS,
    bursts: BURSTS,
    burstGapMs: 3000,
    restartAfterBursts: [0, 2],
    // Both kills land inside creates (the simulator takes 2.5 s over them; not longer, as B's
    // provider gives a create up after 5 s): no second machine for any.
    slowCreatesBeforeRestart: 2_500,
    outage: { burst: 1, ms: 60_000 },
    intruder: true,
    async chaos(stack) {
      const rules: FaultRule[] = [
        // 10 % of creates hang (the request gets no answer until the coordinator gives up)…
        { operation: "create", probability: 0.1, action: { type: "hang" } },
        // (A batch create hangs whole, as one request: 10 % of them.)
        { operation: "create_batch", probability: 0.1, action: { type: "hang" } },
        // …and 30 % of all creates fail (a third of the other 90 %).
        { operation: "create", probability: 1 / 3, action: { type: "respond", status: 500, body: { error: "simulated cloud failure" } } },
        { operation: "delete", probability: 0.1, action: { type: "respond", status: 503, body: { error: "simulated delete failure" } } },
      ];
      // Added to the profile's faults (a production profile's create latency stays).
      for (const rule of rules) {
        await fetch(`${stack.w.shimControl}/faults/rules`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(rule),
        });
      }
      await stack.gh.fault(
        { kind: "server_error", times: -1, probability: 0.1, status: 502 },
        // One primary rate-limit window: GitHub says the budget is gone until it resets.
        { kind: "rate_limit", times: 1, reset_in: 4 },
      );
    },
    // The 60 s outage, and a minute at most before recovery's next pass finds what it missed.
    jobsTimeoutMs: 300_000,
    settleTimeoutMs: 90_000,
  },
  S: {
    name: "S",
    vars: TIMINGS,
    sim: { boot_delay_ms: 100, job_ms: 400 },
    scaleSets: [
      { name: "small", labels: ["self-hosted", "linux", "small"], max: 6, minIdle: 1 },
      { name: "pull", labels: ["self-hosted", "linux"], max: 6, minIdle: 0, intake: "scaleset_api" },
    ],
    bursts: [
      { small: 6, pull: 6 },
      { small: 6, pull: 6 },
      { small: 6, pull: 6 },
    ],
    burstGapMs: 3000,
    restartAfterBursts: [0, 1],
    // Creates take 4.5 s then: longer than the restart, so the restarted coordinator asks about
    // machines not made yet (which it must wait for, not make again).
    slowCreatesBeforeRestart: 4_500,
    // An empty poll answers after 5 s here (GitHub: ~50 s), so the disabled scale set's session closes soon.
    async chaos(stack) {
      await stack.gh.actionsSettings({ poll_wait_ms: 5_000 });
    },
    check: checkScaleSetApi,
    jobsTimeoutMs: 120_000,
    settleTimeoutMs: 60_000,
  },
  E: {
    name: "E",
    vars: TIMINGS,
    sim: { boot_delay_ms: 100, job_ms: 400 },
    entity: "enterprise",
    githubSeed: { enterprise_orgs: { acme: ["octo"] } },
    // The enterprise's hook: every delivery fails, and GitHub shows no record of them through its API.
    delivery: { scope: "enterprises/acme", drop_probability: 1 },
    scaleSets: [{ name: "ent", labels: ["self-hosted", "linux", "ent"], max: 6, minIdle: 0 }],
    bursts: [{ ent: 6 }, { ent: 6 }],
    burstGapMs: 3000,
    check: checkBackstop,
    jobsTimeoutMs: 120_000,
    settleTimeoutMs: 60_000,
  },
  EC2: {
    name: "EC2",
    vars: TIMINGS,
    sim: { boot_delay_ms: 0, job_ms: 400 },
    scaleSets: [
      {
        name: "ec2-spot",
        labels: ["self-hosted", "linux", "ec2-spot"],
        max: 4,
        minIdle: 0,
        extraSpecs: { instance_types: ["m5.large"], subnet_ids: [SUBNET_A, SUBNET_B], capacity: "spot-with-fallback" },
      },
      {
        name: "ec2-od",
        labels: ["self-hosted", "linux", "ec2"],
        max: 4,
        minIdle: 0,
        extraSpecs: { subnet_ids: [SUBNET_A, SUBNET_B], tags: { team: "ci" } },
      },
    ],
    bursts: [
      { "ec2-spot": 4, "ec2-od": 4 },
      { "ec2-spot": 4, "ec2-od": 4 },
      { "ec2-spot": 4, "ec2-od": 4 },
    ],
    burstGapMs: 3000,
    ec2: {
      faults: {
        launch: [
          // The flavor has no capacity in subnet A, and none as spot anywhere…
          { code: "InsufficientInstanceCapacity", instance_type: "c5.large", subnet_id: SUBNET_A },
          { code: "InsufficientInstanceCapacity", instance_type: "c5.large", market: "spot" },
          // …and the account's spot limit is hit three times (those creates go on-demand).
          { code: "MaxSpotInstanceCountExceeded", market: "spot", instance_type: "m5.large", times: 3 },
        ],
        actions: [{ action: "RunInstances", code: "RequestLimitExceeded", times: 2 }],
      },
    },
    check: checkEc2,
    jobsTimeoutMs: 90_000,
    settleTimeoutMs: 45_000,
  },
  GCE: {
    name: "GCE",
    vars: TIMINGS,
    ...GCE_SCENARIO,
    cloud: (shimLog) => gceCloud({ faults: GCE_SCENARIO.faults, shimLog }),
    check: checkGce,
  },
  HETZNER: {
    name: "HETZNER",
    vars: TIMINGS,
    ...HETZNER_SCENARIO,
    cloud: (shimLog) => hetznerCloud({ faults: HETZNER_SCENARIO.faults, shimLog }),
    check: checkHetzner,
  },
};

const say = (msg: string) => process.stderr.write(`e2e: ${msg}\n`);

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

async function runScenario(
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

const { profile, rest: args } = profileFromArgs(process.argv.slice(2));
let repeat = 1;
const names: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--repeat") repeat = Number(args[++i]);
  else names.push(args[i]!.toUpperCase());
}
/** Scenarios in worlds of their own, each in its file. */
const ownWorlds: Record<string, typeof runForgesScenario> = { G: runForgesScenario, SHAPES: runShapesScenario };
const chosen = names.length ? names : [...Object.keys(scenarios), ...Object.keys(ownWorlds)];
let failed = false;
for (let r = 0; r < repeat; r++) {
  for (const name of chosen) {
    const sc = scenarios[name];
    const own = ownWorlds[name];
    if (!sc && !own) throw new Error(`no scenario ${name}; have ${[...Object.keys(scenarios), ...Object.keys(ownWorlds)].join(", ")}`);
    const t = Date.now();
    say(`scenario ${name}${repeat > 1 ? ` (run ${r + 1}/${repeat})` : ""}`);
    const out = sc ? await runScenario(sc, profile) : await own!(profile);
    console.log(
      JSON.stringify({ ...out.summary, profile: profile.name, shim: profile.shim, wall_s: Math.round((Date.now() - t) / 100) / 10 }),
    );
    if (!out.ok) {
      failed = true;
      for (const v of out.violations) say(`${name}: BROKEN: ${v}`);
    }
  }
}
process.exit(failed ? 1 : 0);
