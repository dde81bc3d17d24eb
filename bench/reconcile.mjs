#!/usr/bin/env node
// npm run bench:reconcile [-- --sizes 10,100,1000,5000,10000 --sets 100 --set-size 100 --jobs 200 --repeat 5]
//
// Starts the fake GitHub, the fake shim and the coordinator (`wrangler dev`, fresh local state),
// then prints one JSON document with:
//  - reconcile: for each size, one scale set holding that many instances; the D1 round trips
//    and wall time of a steady-state reconcile (nothing to do) and of a churn reconcile (10 % of
//    the runners finished their jobs and as many new jobs are queued: deletes and creates).
//    Round trips must not grow with the size. With each, what the largest invocation of the object
//    spent: subrequests (outbound fetches + D1 calls) and D1 queries, and workerd's CPU over it.
//  - many_scale_sets: --sets scale sets of --set-size instances on one credential, all
//    reconciling at once, steady and churn (bench/reconcile-many.mjs); --sets 0 skips it.
//  - per_invocation: for the largest single scale set and for the many, the largest subrequests,
//    D1 queries and CPU per invocation seen, against Cloudflare's budgets (10,000 / 1,000 / 30 s),
//    and whether they pass.
//  - webhook_to_create: for each of --jobs queued jobs, sent one at a time as signed webhooks,
//    the time from sending the webhook to the shim receiving the create request.

import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { freshJobTimes, note, sleep, startCoordinator, startNodeScript, summarize } from "./harness.mjs";
import { deliverWebhook, fakeWorld } from "./harness-world.mjs";
import { againstBudgets, BUDGETS, churnRows, instanceRows, manyScaleSets, workerdCpuMs } from "./reconcile-many.mjs";

const require = createRequire(import.meta.url);

function flags(argv) {
  const out = { sizes: [10, 100, 1000, 5000, 10000], sets: 100, setSize: 100, jobs: 200, repeat: 5 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--sizes") out.sizes = argv[++i].split(",").map(Number);
    else if (a === "--jobs") out.jobs = Number(argv[++i]);
    else if (a === "--repeat") out.repeat = Number(argv[++i]);
    else if (a === "--sets") out.sets = Number(argv[++i]);
    else if (a === "--set-size") out.setSize = Number(argv[++i]);
    else throw new Error(`unknown flag ${a}`);
  }
  const whole = (n) => Number.isInteger(n) && n >= 0;
  if (
    out.sizes.some((n) => !Number.isInteger(n) || n < 1) ||
    !whole(out.jobs) ||
    !(out.repeat >= 1) ||
    !whole(out.sets) ||
    !(out.setSize >= 1)
  ) {
    throw new Error("--sizes takes positive integers, --jobs, --sets, --set-size and --repeat whole numbers");
  }
  return out;
}

const opts = flags(process.argv.slice(2));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const github = await startNodeScript("test/fake-github/main.ts");
const shim = await startNodeScript("test/fake-shim/main.ts");
const coordinator = await startCoordinator(
  {
    // Reconciliation only when the bench asks for it (or a nudge, in the webhook part).
    RECONCILE_INTERVAL_SECONDS: "3600",
    ORPHAN_CHECK_SECONDS: "86400",
    SCALE_DOWN_IDLE_SECONDS: "86400",
    NUDGE_DELAY_SECONDS: "0",
    // BENCH_COORDINATOR_LOG=file keeps the coordinator's log lines there.
  },
  { log: process.env.BENCH_COORDINATOR_LOG },
);
const stopAll = async () => {
  await coordinator.stop();
  github.proc.kill("SIGTERM");
  shim.proc.kill("SIGTERM");
};

try {
  const w = await fakeWorld(coordinator, github.info.url, shim.info.url);
  const result = { reconcile: [], many_scale_sets: null, per_invocation: null, webhook_to_create: null };

  let jobId = 5_000_000;
  const nextJobId = () => jobId++;
  for (const size of opts.sizes) {
    note(`reconcile with ${size} instances`);
    const ss = await coordinator.api("POST", `/repositories/${w.repo.id}/scalesets`, {
      name: `size-${size}`,
      provider_name: w.provider,
      labels: ["self-hosted", "linux"],
      // Room for the churn's creates, within the API's largest scale set (10,000).
      max_runners: Math.min(10_000, size + Math.ceil(size / 10)),
      min_idle_runners: size,
      image: "ubuntu:24.04",
      flavor: "small",
      enabled: false,
    });
    // The instances exist already (seeded into D1): idle runners, exactly what min idle asks for.
    const now = Date.now();
    const file = join(coordinator.work, `seed-${size}.sql`);
    const chunks = instanceRows(ss.id, `bench-${size}`, size, now);
    writeFileSync(file, chunks.join("\n"));
    coordinator.sql(file);
    await coordinator.api("PUT", `/scalesets/${ss.id}`, { enabled: true });
    await sleep(200);

    const steady = [];
    for (let r = 0; r < opts.repeat; r++) {
      const t0 = performance.now();
      const status = await coordinator.api("POST", `/scalesets/${ss.id}/reconcile`);
      steady.push({ wall: performance.now() - t0, ...status.last_reconcile });
    }

    // Churn: a tenth of the runners finished their jobs, and as many new jobs are queued.
    const churn = Math.max(1, Math.floor(size / 10));
    const churnSql = churnRows(ss.id, `bench-${size}`, churn, nextJobId, now);
    const churnFile = join(coordinator.work, `churn-${size}.sql`);
    writeFileSync(churnFile, churnSql.join("\n"));
    coordinator.sql(churnFile);
    const cpu0 = workerdCpuMs(coordinator);
    const t0 = performance.now();
    const churned = (await coordinator.api("POST", `/scalesets/${ss.id}/reconcile`)).last_reconcile;
    const churnWall = performance.now() - t0;
    const churnCpu = cpu0 === null ? null : Math.round(workerdCpuMs(coordinator) - cpu0);
    // The most any one invocation of this object spent (its first alarm's drift check included).
    const largest = (await coordinator.api("GET", `/scalesets/${ss.id}`)).status.invocations.largest;

    result.reconcile.push({
      instances: size,
      steady: {
        d1_round_trips: median(steady.map((s) => s.d1RoundTrips)),
        d1_queries: median(steady.map((s) => s.d1Queries)),
        subrequests: median(steady.map((s) => s.subrequests)),
        wall_ms_p50: Math.round(median(steady.map((s) => s.wall)) * 10) / 10,
        object_ms_p50: median(steady.map((s) => s.durationMs)),
      },
      churn: {
        deleted: churned.actions.delete ?? 0,
        created: churned.actions.create ?? 0,
        passes: churned.passes,
        d1_round_trips: churned.d1RoundTrips,
        d1_round_trips_per_pass: Math.round((churned.d1RoundTrips / churned.passes) * 10) / 10,
        // Per invocation, against Cloudflare's budget of 1,000 D1 queries.
        d1_queries: churned.d1Queries,
        // Outbound fetches (GitHub, the shim) plus every D1 call: Cloudflare's 10,000 subrequests.
        subrequests: churned.subrequests,
        fetches: churned.fetches,
        wall_ms: Math.round(churnWall),
        // workerd's CPU over the call (the request and D1's SQLite included: more than the object's).
        workerd_cpu_ms: churnCpu,
        error: churned.error,
      },
      largest_invocation: largest,
    });
    // Leave the scale set quiet for the next size.
    await coordinator.api("PUT", `/scalesets/${ss.id}`, { enabled: false });
  }

  if (opts.sets > 0) {
    result.many_scale_sets = await manyScaleSets({ coordinator, world: w, sets: opts.sets, size: opts.setSize, nextJobId });
  }
  const biggest = result.reconcile.at(-1);
  result.per_invocation = {
    budgets: BUDGETS,
    ...(biggest && {
      [`one_scale_set_${biggest.instances}`]: againstBudgets({
        subrequests: biggest.largest_invocation.subrequests,
        d1_queries: biggest.largest_invocation.d1_queries,
        cpu_ms: biggest.churn.workerd_cpu_ms,
      }),
    }),
    ...(result.many_scale_sets && {
      [`scale_sets_${opts.sets}x${opts.setSize}`]: result.many_scale_sets.per_invocation,
    }),
  };

  if (opts.jobs > 0) {
    note(`webhook → shim create for ${opts.jobs} jobs`);
    const ss = await coordinator.api("POST", `/repositories/${w.repo.id}/scalesets`, {
      name: "latency",
      provider_name: w.provider,
      labels: ["self-hosted", "linux", "latency"],
      max_runners: opts.jobs + 10,
      image: "ubuntu:24.04",
      flavor: "small",
      priority: 100,
    });
    const examples = require("@octokit/webhooks-examples/api.github.com/index.json");
    const queued = examples.find((e) => e.name === "workflow_job").examples.find((e) => e.action === "queued");
    const creates = async () => (await (await fetch(`${w.shimControl}/requests`)).json()).filter((r) => r.operation === "create");
    const samples = [];
    for (let i = 0; i < opts.jobs; i++) {
      const payload = structuredClone(queued);
      payload.repository.full_name = "octo/app";
      payload.repository.name = "app";
      payload.repository.owner.login = "octo";
      delete payload.organization;
      delete payload.enterprise;
      payload.workflow_job.id = 9_000_000 + i;
      payload.workflow_job.run_id = 9_000_000 + i;
      payload.workflow_job.labels = ["self-hosted", "linux", "latency"];
      freshJobTimes(payload);
      const before = (await creates()).length;
      const sentAt = Date.now();
      const res = await deliverWebhook(coordinator, w.webhookSecret, payload);
      if (!res.ok) throw new Error(`webhook: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
      // The figure is the shim's own timestamp of the create, so how often we look only sets how
      // soon the next job goes. Looking every 2 ms (a request to the shim and its whole request
      // list each time) took a core's worth of this 2-core machine from the coordinator under test.
      let seen = null;
      for (let t = 0; t < 500 && !seen; t++) {
        await sleep(10);
        const list = await creates();
        if (list.length > before) seen = list[list.length - 1];
      }
      if (!seen) throw new Error(`no create request reached the shim for job ${i}`);
      samples.push(Math.max(0, seen.at - sentAt));
    }
    result.webhook_to_create = { ...summarize(samples), note: "a queued webhook sent → the shim receives POST /v1/instances for it" };
    void ss;
  }

  console.log(JSON.stringify(result, null, 2));
} finally {
  await stopAll();
}
