#!/usr/bin/env node
// npm run bench [-- --quick] [--profile loopback|production] [--shim sync|async] [--jobs N] [--latency-jobs N] [--credentials N]
//
// Every benchmark, one after the other (they share this machine's cores, so never at once), and
// one JSON document on stdout:
//  - webhooks: intake throughput and p50/p99 acknowledgement vs the floor route (bench/webhooks.mjs)
//  - reconcile: D1 round trips and time of a reconcile at 100 / 1,000 / 5,000 / 10,000 instances,
//    100 scale sets × 100 instances reconciling at once, the largest subrequests, D1 queries and
//    CPU per invocation against Cloudflare's budgets (per_invocation), and a queued webhook →
//    shim create request p50/p99 (bench/reconcile.mjs)
//  - lifecycle_floor: the workerd CPU a runner's life costs a Worker that does only the least
//    each of its requests needs (bench/lifecycle-floor.mjs): the floor under the burst's
//    coordinator_cpu_ms_per_runner, which gets floor_workerd and workerd_over_floor from it
//  - recovery: failed deliveries taken in by fetching their payloads back (what the coordinator
//    does) against redelivering them through GitHub: time, GitHub calls and points, Worker
//    invocations; and GitHub calls per hook per hour while nothing fails (bench/delivery-recovery.ts)
//  - workflows: queued → create and queued → in progress p50/p99, for a webhook-fed scale set
//    and for one fed by the runner scale set API (scaleset_api), and a 1,000-job burst: time
//    until all are created, configured and in progress, GitHub calls per runner, the
//    coordinator's CPU per runner (bench/workflows.ts); each burst also gives the Cloudflare billing
//    units the coordinator counted per job
//  - cost: what a job costs in Cloudflare's billing units on the shipped timers, what an idle scale set
//    spends a day, jobs a day within the Free plan (free_plan_jobs_per_day, free_plan_binding_limit) and
//    dollars per 1,000 jobs on Workers Paid (usd_per_1000_jobs), the largest invocation of each kind
//    against the Free plan's 50 subrequests and 50 D1 queries (bench/cost.ts)
// --quick runs each with smaller counts (a smoke run, not figures to quote).
// --profile production runs the workflows part in the production-like profile (e2e/profiles.ts:
// GitHub latency and secondary limits, ~1 s shim creates, six outbound calls per object,
// machines booting in ~20 s; --shim async for 202 creates): the 1,000-job burst with 1, 2 and 3
// credentials, a 250-job burst with 1 (`bursts`, `burst` being the first) and a 1,000-job burst
// on a scale set API scale set (`scaleset_api_burst`); --quick: one 100-job burst. --jobs N
// [--credentials N] runs one burst of that size instead. Webhooks and reconcile measure the
// coordinator's own costs and stay on loopback.
// Progress goes to stderr.

import { spawn } from "node:child_process";
import { cpus } from "node:os";
import { join } from "node:path";
import { note, root } from "./harness.mjs";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const passed = [];
const unknown = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--quick") continue;
  if (a === "--profile" || a === "--shim" || a === "--jobs" || a === "--credentials" || a === "--latency-jobs") passed.push(a, argv[++i]);
  else unknown.push(a);
}
if (unknown.length)
  throw new Error(`unknown flags: ${unknown.join(" ")} (only --quick, --profile, --shim, --jobs, --credentials, --latency-jobs)`);
const profileName = passed.includes("--profile") ? passed[passed.indexOf("--profile") + 1] : "loopback";
// The production bursts (issue 26): 1,000 jobs on 1, 2 and 3 credentials and 250 on 1, on one
// stack; the first is `burst`, whose CPU per runner is read against the floor below. Then one on
// a scale set API scale set, whose JIT configs come from the Actions service.
const productionBursts =
  profileName === "production" && !quick && !passed.includes("--jobs") && !passed.includes("--credentials")
    ? ["--bursts", "1000x1,250x1,1000x2,1000x3", "--scaleset-api-burst", "1000"]
    : [];

const parts = [
  { key: "webhooks", script: "bench/webhooks.mjs", args: quick ? ["--requests", "400", "--rounds", "4", "--warmup", "50"] : [] },
  {
    key: "reconcile",
    script: "bench/reconcile.mjs",
    args: [
      ...["--sizes", quick ? "100,1000" : "100,1000,5000,10000", "--jobs", quick ? "30" : "200"],
      ...["--sets", quick ? "10" : "100", "--set-size", "100"],
    ],
  },
  // The floor under the burst's CPU per runner: what this workerd spends on a runner's life at least.
  { key: "lifecycle_floor", script: "bench/lifecycle-floor.mjs", args: quick ? ["--runners", "100"] : [] },
  { key: "recovery", script: "bench/delivery-recovery.ts", args: quick ? ["--jobs", "10", "--quiet-passes", "2"] : [] },
  // What a job costs in Cloudflare's billing units, idle scale sets and the price on each plan (bench/cost.ts).
  {
    key: "cost",
    script: "bench/cost.ts",
    args: [
      ...(quick ? ["--jobs", "20", "--sets", "3", "--idle-seconds", "60", "--listen-seconds", "20"] : []),
      ...passed.filter((_, i, a) => a[i] === "--profile" || a[i] === "--shim" || a[i - 1] === "--profile" || a[i - 1] === "--shim"),
    ],
  },
  {
    key: "workflows",
    script: "bench/workflows.ts",
    args: [...(quick ? ["--latency-jobs", "10", "--burst", "100"] : []), ...productionBursts, ...passed],
  },
];

function run(script, args) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--experimental-strip-types", "--no-warnings", join(root, script), ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    proc.stdout.on("data", (d) => (out += d));
    proc.once("error", reject);
    proc.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`${script} exited with ${code}`));
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`${script} did not print one JSON document: ${out.slice(0, 500)}`));
      }
    });
  });
}

const started = Date.now();
const result = {
  started_at: new Date(started).toISOString(),
  quick,
  profile: profileName,
  machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? null, node: process.version },
};
for (const p of parts) {
  note(`${p.key}: node ${p.script} ${p.args.join(" ")}`);
  const t = Date.now();
  const doc = await run(p.script, p.args);
  if (p.key === "reconcile") {
    result.reconcile = doc.reconcile;
    result.many_scale_sets = doc.many_scale_sets;
    result.per_invocation = doc.per_invocation;
    result.webhook_to_create = doc.webhook_to_create;
  } else if (p.key === "workflows") {
    Object.assign(result, doc);
  } else if (p.key === "cost") {
    result.cost = doc;
    // The headline figures at the top, where scripts look for them.
    result.usd_per_1000_jobs = doc.usd_per_1000_jobs;
    result.free_plan_jobs_per_day = doc.free_plan_jobs_per_day;
    result.free_plan_binding_limit = doc.free_plan_binding_limit;
  } else {
    result[p.key] = doc;
  }
  note(`${p.key}: done in ${Math.round((Date.now() - t) / 1000)} s`);
}
// The burst's CPU per runner read against the floor's (bench/lifecycle-floor.mjs): in production,
// the 1,000-job burst with one credential (target ≤ 1.5×).
const cpu = result.burst?.coordinator_cpu_ms_per_runner;
const floorCpu = result.lifecycle_floor?.floor_cpu_ms_per_runner;
if (cpu && floorCpu) {
  cpu.floor_workerd = floorCpu.workerd;
  cpu.workerd_over_floor = Math.round((cpu.workerd / floorCpu.workerd) * 100) / 100;
}
result.wall_s = Math.round((Date.now() - started) / 1000);
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
