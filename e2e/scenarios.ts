/**
 * The scenarios that run in the simulator's world (e2e/scenario-runner.ts runs them; G and SHAPES,
 * worlds of their own, are e2e/forges.ts and e2e/shapes.ts): what each sets up, its faults, and
 * what it checks beyond the invariants every scenario shares.
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
 */
import { sleep } from "../bench/harness.mjs";
import type { SimulatorConfig } from "../shims/simulator/simulator.ts";
import type { Ec2Faults } from "../test/fake-ec2/types.ts";
import type { DeliveryConfig, Seed } from "../test/fake-github/types.ts";
import type { FaultRule } from "../test/fake-shim/types.ts";
import type { StartCloud } from "./cloud.ts";
import { checkEc2, EC2_SCENARIO } from "./ec2-cloud.ts";
import { checkGce, GCE_SCENARIO, gceCloud } from "./gce-cloud.ts";
import { checkHetzner, HETZNER_SCENARIO, hetznerCloud } from "./hetzner-cloud.ts";
import { type Stack, E2E_TIMINGS as TIMINGS } from "./stack.ts";

export interface ScaleSetSpec {
  name: string;
  labels: string[];
  max: number;
  minIdle: number;
  extraSpecs?: Record<string, unknown>;
  /** scaleset_api: fed by the runner scale set API; its jobs say `runs-on: <name>`. */
  intake?: "webhook" | "scaleset_api";
}

export interface Scenario {
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

export const scenarios: Record<string, Scenario> = {
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
    ...EC2_SCENARIO,
    ec2: { faults: EC2_SCENARIO.faults },
    check: checkEc2,
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
