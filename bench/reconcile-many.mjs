// Many scale sets at once, for bench/reconcile.mjs: `sets` scale sets of `size` instances each,
// on one credential, all reconciling at the same time (a steady pass, then a churn: a tenth of each
// set's runners finished their jobs and as many new jobs are queued). What matters is what one
// invocation spends against Cloudflare's per-invocation budgets, so this reports the largest seen
// over every object, with the workerd CPU the whole round took (an upper bound on any one
// invocation's: they all ran in it).

import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { note, sleep } from "./harness.mjs";

/** Cloudflare's per-invocation budgets on the paid plan (src/lib/invocation-cost.ts). */
export const BUDGETS = { subrequests: 10_000, d1_queries: 1_000, cpu_ms: 30_000 };

/** workerd's CPU in ms so far, or null without /proc. */
export const workerdCpuMs = (coordinator) => {
  const s = coordinator.cpuSeconds();
  return s ? s.workerd * 1000 : null;
};

/** INSERT statements for idle running instances, 200 rows each (D1's statement size). */
export function instanceRows(scaleSetId, prefix, size, now) {
  const rows = Array.from({ length: size }, (_, i) => {
    const id = randomUUID();
    return `('${id}','${prefix}-${i}','${scaleSetId}','p-${id}','running','idle',${now},'[]','linux','amd64',1,${now},${now},${now})`;
  });
  const out = [];
  for (let i = 0; i < rows.length; i += 200) {
    out.push(
      `INSERT INTO instances (id,name,scale_set_id,provider_id,status,runner_status,runner_status_changed_at,addresses,os_type,os_arch,create_attempt,created_at,updated_at,status_changed_at) VALUES ${rows.slice(i, i + 200).join(",")};`,
    );
  }
  return out;
}

/** Statements that finish the jobs of `churn` runners (named `${prefix}-0` …) and queue as many new jobs. */
export function churnRows(scaleSetId, prefix, churn, nextJobId, now) {
  const out = [];
  for (let i = 0; i < churn; i++) {
    const done = nextJobId();
    out.push(
      `INSERT INTO jobs (id,run_id,repository,owner,labels,status,scale_set_id,created_at,updated_at) VALUES (${done},1,'octo/app','octo','["self-hosted"]','completed','${scaleSetId}',${now},${now});`,
      `UPDATE instances SET job_id = ${done}, runner_status = 'active' WHERE name = '${prefix}-${i}';`,
      `INSERT INTO jobs (id,run_id,repository,owner,labels,status,scale_set_id,created_at,updated_at) VALUES (${nextJobId()},1,'octo/app','octo','["self-hosted"]','queued','${scaleSetId}',${now},${now});`,
    );
  }
  return out;
}

/** The largest of each figure over a list of objects' `status.invocations.largest`. */
export function largestOf(views) {
  const out = { subrequests: 0, fetches: 0, d1_round_trips: 0, d1_queries: 0 };
  for (const v of views) if (v) for (const k of Object.keys(out)) out[k] = Math.max(out[k], v[k] ?? 0);
  return out;
}

/** A verdict against the budgets: each figure with its budget, and pass/fail. */
export function againstBudgets({ subrequests, d1_queries, cpu_ms }) {
  const checks = { subrequests, d1_queries, ...(cpu_ms !== null && cpu_ms !== undefined && { cpu_ms }) };
  const fail = Object.entries(checks).filter(([k, v]) => v > BUDGETS[k]);
  return { ...checks, budgets: BUDGETS, verdict: fail.length ? `fail (${fail.map(([k]) => k).join(", ")})` : "pass" };
}

/** Reconciles every scale set at once; returns each one's last_reconcile, the wall time and workerd's CPU over the round. */
async function reconcileAll(coordinator, ids) {
  const cpu0 = workerdCpuMs(coordinator);
  const t0 = performance.now();
  const lasts = await Promise.all(ids.map(async (id) => (await coordinator.api("POST", `/scalesets/${id}/reconcile`)).last_reconcile));
  const wall = performance.now() - t0;
  const cpu1 = workerdCpuMs(coordinator);
  return { lasts, wall_ms: Math.round(wall), cpu_ms: cpu0 === null ? null : Math.round(cpu1 - cpu0) };
}

/** Every object's status.invocations.largest, then the largest of them. */
async function largestInvocations(coordinator, ids) {
  const views = await Promise.all(ids.map(async (id) => (await coordinator.api("GET", `/scalesets/${id}`)).status.invocations.largest));
  return largestOf(views);
}

export async function manyScaleSets({ coordinator, world, sets, size, nextJobId }) {
  note(`${sets} scale sets × ${size} instances`);
  const tag = randomUUID().slice(0, 6);
  const ids = [];
  for (let s = 0; s < sets; s++) {
    const ss = await coordinator.api("POST", `/repositories/${world.repo.id}/scalesets`, {
      name: `many-${tag}-${s}`,
      provider_name: world.provider,
      labels: ["self-hosted", "linux", `many-${s}`],
      max_runners: size + Math.ceil(size / 10),
      min_idle_runners: size,
      image: "ubuntu:24.04",
      flavor: "small",
      enabled: false,
    });
    ids.push(ss.id);
  }
  const now = Date.now();
  const seed = ids.flatMap((id, s) => instanceRows(id, `many-${tag}-${s}`, size, now));
  const seedFile = join(coordinator.work, `seed-many-${tag}.sql`);
  writeFileSync(seedFile, seed.join("\n"));
  coordinator.sql(seedFile);
  // Enabling nudges each object: their first passes (and drift checks) run now, all at once.
  await Promise.all(ids.map((id) => coordinator.api("PUT", `/scalesets/${id}`, { enabled: true })));
  await sleep(500);

  const steady = await reconcileAll(coordinator, ids);
  const steadyLargest = await largestInvocations(coordinator, ids);

  const churn = Math.max(1, Math.floor(size / 10));
  const churnFile = join(coordinator.work, `churn-many-${tag}.sql`);
  writeFileSync(churnFile, ids.flatMap((id, s) => churnRows(id, `many-${tag}-${s}`, churn, nextJobId, now)).join("\n"));
  coordinator.sql(churnFile);
  const churned = await reconcileAll(coordinator, ids);
  const churnLargest = await largestInvocations(coordinator, ids);
  const sum = (k) => churned.lasts.reduce((n, l) => n + (l.actions?.[k] ?? 0), 0);
  const maxOf = (lasts, k) => Math.max(...lasts.map((l) => l[k] ?? 0));

  // Leave them quiet for whatever runs next.
  await Promise.all(ids.map((id) => coordinator.api("PUT", `/scalesets/${id}`, { enabled: false })));
  return {
    scale_sets: sets,
    instances_each: size,
    steady: {
      wall_ms: steady.wall_ms,
      workerd_cpu_ms: steady.cpu_ms,
      run_subrequests_max: maxOf(steady.lasts, "subrequests"),
      run_d1_queries_max: maxOf(steady.lasts, "d1Queries"),
      largest_invocation: steadyLargest,
      errors: steady.lasts.filter((l) => l.error).length,
    },
    churn: {
      deleted: sum("delete"),
      created: sum("create"),
      wall_ms: churned.wall_ms,
      workerd_cpu_ms: churned.cpu_ms,
      run_subrequests_max: maxOf(churned.lasts, "subrequests"),
      run_d1_queries_max: maxOf(churned.lasts, "d1Queries"),
      largest_invocation: churnLargest,
      errors: churned.lasts.filter((l) => l.error).length,
    },
    per_invocation: againstBudgets({
      subrequests: Math.max(steadyLargest.subrequests, churnLargest.subrequests),
      d1_queries: Math.max(steadyLargest.d1_queries, churnLargest.d1_queries),
      // All objects' CPU over the round: any one invocation used less.
      cpu_ms: steady.cpu_ms === null ? null : Math.max(steady.cpu_ms, churned.cpu_ms),
    }),
  };
}
