/**
 * npm run bench:cost [-- --profile loopback|production] [--plan paid|free] [--jobs 200] [--sets 10] [--idle-seconds 900] [--listen-seconds 900]
 *
 * `--plan free` deploys the coordinator as `edgerunner setup --plan free` does (CLOUDFLARE_PLAN=free,
 * a 2-minute idle tick, orphan checks every 15 minutes): the Free plan's figures.
 *
 * What a job costs to coordinate, in Cloudflare's billing units, on a coordinator with its
 * shipped timers (a 30 s tick, orphan checks every 5 minutes): the counts come from the
 * coordinator's own tally (GET /api/v1/usage, src/lib/usage-tally.ts), not from estimates.
 *
 *  1. idle: `--sets` webhook scale sets with nothing to do, for `--idle-seconds` (at least the
 *     15 minutes an isolate with nothing to do waits between writes of its counts, so that the
 *     window holds one: observability/op-counters.ts USAGE_FLUSH_MS): the units an idle scale set
 *     spends a day;
 *  2. burst: `--jobs` jobs queued at once on one of the idle scale sets, until every machine is
 *     gone; the idle rate over the burst's time is taken off, the rest divided by the jobs;
 *  3. listener: then one scale set API scale set beside them for `--listen-seconds`: what its long
 *     poll adds a day (after the burst, so that it takes none of the burst's jobs). The window
 *     holds a write of the counts too, as the idle one does: a shorter one reads the idle scale
 *     sets' unwritten counts as the listener's savings.
 *
 * Then the price (src/usage/pricing.ts over src/usage/price-table.ts): jobs a day within the
 * Free plan beside the idle scale sets, and which limit binds; dollars per 1,000 jobs on Workers
 * Paid beyond its included amounts, with the idle day spread over that many jobs. Worker CPU per
 * job is the coordinator's workerd CPU over the burst (an upper bound: it includes the objects,
 * whose time is billed as duration). The largest invocation of each kind (subrequests and D1
 * queries) is printed against the Free plan's 50 and 50. One JSON document on stdout.
 */
import { profileFromArgs } from "../e2e/profiles.ts";
import { startStack } from "../e2e/stack.ts";
import { CLOUDFLARE_PRICES, UNITS } from "../src/usage/price-table.ts";
import { freePlanJobsPerDay, paidUsdPer1000Jobs } from "../src/usage/pricing.ts";
import { createScaleSet, jobLabels, shimCreates, waitJobs, waitMachinesGone } from "./bench-world.ts";
import { note, sleep } from "./harness.mjs";
import { kindsDelta, minus, rounded, scaled, readUsage as usage } from "./usage-units.ts";

const { profile, rest } = profileFromArgs(process.argv.slice(2));
const opt = { jobs: 200, sets: 10, idleSeconds: 900, listenSeconds: 900, plan: "paid" as "paid" | "free" };
for (let i = 0; i < rest.length; i++) {
  const flag = rest[i]!;
  if (flag === "--plan") {
    const p = rest[++i];
    if (p !== "free" && p !== "paid") throw new Error("--plan takes free or paid");
    opt.plan = p;
    continue;
  }
  const v = Number(rest[++i]);
  if (!Number.isInteger(v) || v < 0) throw new Error(`${flag} takes a whole number`);
  if (flag === "--jobs") opt.jobs = v;
  else if (flag === "--sets") opt.sets = v;
  else if (flag === "--idle-seconds") opt.idleSeconds = v;
  else if (flag === "--listen-seconds") opt.listenSeconds = v;
  else throw new Error(`unknown flag ${flag} (only --profile, --shim, --plan, --jobs, --sets, --idle-seconds, --listen-seconds)`);
}
if (opt.sets < 1 || opt.jobs < 1) throw new Error("--sets and --jobs take at least 1");

// BENCH_LOG=file keeps the coordinator's log.
const stack = await startStack({
  profile,
  sim: { job_ms: 200, poll_ms: 20 },
  coordinatorLog: process.env.BENCH_LOG,
  vars: {
    // `--plan free`: what `edgerunner setup --plan free` deploys (cli/src/setup/cloudflare-plan.ts).
    ...(opt.plan === "free" && { CLOUDFLARE_PLAN: "free", RECONCILE_INTERVAL_SECONDS: "120", ORPHAN_CHECK_SECONDS: "900" }),
    ...(process.env.BENCH_LOG_LEVEL && { LOG_LEVEL: process.env.BENCH_LOG_LEVEL }),
  },
});
try {
  const { gh } = stack;
  note(`cost: ${opt.sets} idle webhook scale sets with the shipped timers (profile ${profile.name})`);
  const sets: { id: string }[] = [];
  for (let i = 0; i < opt.sets; i++) sets.push(await createScaleSet(stack, `cost-${i}`, Math.max(20, opt.jobs), "webhook", "on_boot"));
  // Their first passes (and the scale sets' creation) are not idle: start counting once they settled.
  await sleep(40_000);

  note(`cost: idle for ${opt.idleSeconds} s`);
  let before = await usage(stack);
  let t0 = Date.now();
  await sleep(opt.idleSeconds * 1000);
  let after = await usage(stack);
  const idleS = (Date.now() - t0) / 1000;
  const idleSet = scaled(minus(after.units, before.units), 86_400 / idleS / opt.sets);
  const idleKinds = kindsDelta(after, before);

  note(`cost: ${opt.jobs} jobs queued at once`);
  const cpuBefore = stack.coordinator.cpuSeconds();
  before = await usage(stack);
  t0 = Date.now();
  await gh.queueJobs({ repository: "octo/app", labels: jobLabels("cost-0", "webhook"), count: opt.jobs, name: "cost-0" });
  await waitJobs(stack, "cost-0", (j) => j.status === "completed", 1_800_000, "completed");
  const left = await waitMachinesGone(stack, 600_000);
  // The last deletions' reports and the runs after them.
  await sleep(5_000);
  after = await usage(stack);
  const burstS = (Date.now() - t0) / 1000;
  const cpuAfter = stack.coordinator.cpuSeconds();
  const cpuS = cpuBefore === null || cpuAfter === null ? 0 : cpuAfter.workerd - cpuBefore.workerd;
  // Idle spending of every scale set over the burst is not the jobs'.
  const idleDuring = scaled(scaled(idleSet, opt.sets), burstS / 86_400);
  const perJob = scaled(minus(minus(after.units, before.units), idleDuring), 1 / opt.jobs);
  perJob.worker_cpu_ms = (cpuS * 1000) / opt.jobs;
  for (const u of UNITS) perJob[u] = Math.max(0, perJob[u]);
  const burstKinds = kindsDelta(after, before);
  const machines = (await shimCreates(stack)).filter((c) => c.status !== null && c.status < 300 && c.at >= t0).length;

  note(`cost: one scale set API scale set listening for ${opt.listenSeconds} s`);
  await createScaleSet(stack, "cost-listener", 10, "scaleset_api", "on_boot");
  before = await usage(stack);
  t0 = Date.now();
  await sleep(opt.listenSeconds * 1000);
  after = await usage(stack);
  const listenS = (Date.now() - t0) / 1000;
  // The listener's day: what the window spent less the idle webhook scale sets' share of it.
  const listenerSet = minus(scaled(minus(after.units, before.units), 86_400 / listenS), scaled(idleSet, opt.sets));

  // A small team: `--sets` idle scale sets, no listener (the Free plan case the issue names).
  const idleDay = scaled(idleSet, opt.sets);
  const free = freePlanJobsPerDay({ perJob, idlePerDay: idleDay });
  const referenceJobs = 1_000;
  const usd = paidUsdPer1000Jobs({ perJob, idlePerDay: idleDay }, referenceJobs);
  const usdBusy = paidUsdPer1000Jobs({ perJob, idlePerDay: idleDay }, 100_000);
  const largest = after.largest_invocations;
  const worst = (f: "subrequests" | "d1_queries") => largest.reduce((m, l) => Math.max(m, l[f]), 0);

  console.log(
    JSON.stringify(
      {
        profile: profile.name,
        plan: opt.plan,
        jobs: opt.jobs,
        idle_scale_sets: opt.sets,
        idle_window_s: Math.round(idleS),
        burst_wall_s: Math.round(burstS),
        machines_left: left,
        units_per_job: rounded(perJob),
        machines_per_job: Math.round((machines / opt.jobs) * 100) / 100,
        burst_by_kind: burstKinds,
        idle_per_scale_set_per_day: rounded(idleSet, 1),
        idle_by_kind_in_window: idleKinds,
        listener_per_scale_set_per_day: rounded(listenerSet, 1),
        free_plan_jobs_per_day: free.jobsPerDay,
        free_plan_binding_limit: free.bindingLimit,
        free_plan_idle_share: Object.fromEntries(Object.entries(free.idleShare).map(([u, v]) => [u, Math.round(v! * 1000) / 1000])),
        usd_per_1000_jobs: usd,
        usd_per_1000_jobs_reference: `${opt.sets} idle scale sets' day spread over ${referenceJobs} jobs a day; every unit priced past the included amounts`,
        usd_per_1000_jobs_at_100k_jobs_a_day: usdBusy,
        largest_invocation_by_kind: largest,
        largest_invocation: { subrequests: worst("subrequests"), d1_queries: worst("d1_queries") },
        free_plan_per_invocation: CLOUDFLARE_PRICES.free.perInvocation,
        prices_checked: CLOUDFLARE_PRICES.checked,
        worker_cpu_ms_note:
          "the coordinator's workerd CPU over the burst per job: Worker and objects together (an upper bound on billed Worker CPU)",
      },
      null,
      2,
    ),
  );
} finally {
  await stack.stop();
}
