import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, transitionsOf } from "./helpers";
import { parsePrometheus, value } from "./prometheus-parse";
import { queueJobs, reconcile, scaleSetWorld } from "./scaleset-world";

// The machine lifetime watchdog (src/scaleset/guards/lifetime-watchdog.ts) in the scale set object:
// machines that overstay go through the ordinary delete (GitHub runner first, then the shim),
// a runner on its job is never reaped unless a hard cap is set. Time passes by moving rows back.

const SHIM_SECRET = "lifetime-watchdog-shim-secret";
const HOUR = 3_600_000;

afterEach(() => vi.restoreAllMocks());

async function rows(scaleSetId: string) {
  return (await env.DB.prepare("SELECT * FROM instances WHERE scale_set_id = ? ORDER BY name").bind(scaleSetId).all<Record<string, any>>())
    .results;
}

async function pendingDeleteReason(instanceId: string) {
  const found = (await transitionsOf(instanceId)).find((t) => t.to_value === "pending_delete" || t.to_value === "pending_force_delete");
  return found ? { to_value: found.to_value, reason: found.reason } : null;
}

async function reapedMetric(scaleSetId: string, reason: string) {
  const res = await exports.default.fetch(
    new Request("https://edgerunner.test/metrics", { headers: { authorization: "Bearer test-metrics-token" } }),
  );
  return value(parsePrometheus(await res.text()), "edgerunner_instances_reaped_total", { scale_set_id: scaleSetId, reason });
}

const reapLines = (spy: { mock: { calls: unknown[][] } }) =>
  spy.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('"event":"instance_reaped"'));

describe("lifetime watchdog", () => {
  it("deletes an overstaying idle machine through the shim and never one running a job; the hard cap takes that too", async () => {
    const w = await scaleSetWorld(SHIM_SECRET, { max_runner_lifetime_seconds: 3_600, jit_config_timing: "before_create" });
    const [jobA, jobB] = await queueJobs(w.scaleSetId, 2);
    await reconcile(w.scaleSetId);
    const [busy, idle] = await rows(w.scaleSetId);
    expect([busy!.status, idle!.status]).toEqual(["running", "running"]);

    // Two hours later: one runner took job A and is on it; job B went to another runner, so this one
    // idles (just now: not long enough for a scale-down, which would otherwise take it first).
    const twoHoursAgo = Date.now() - 2 * HOUR;
    await env.DB.batch([
      env.DB.prepare("UPDATE jobs SET status = 'in_progress' WHERE id = ?").bind(jobA),
      env.DB.prepare("UPDATE jobs SET status = 'completed' WHERE id = ?").bind(jobB),
      env.DB.prepare(
        "UPDATE instances SET job_id = ?1, job_seq = (SELECT seq FROM jobs WHERE id = ?1), runner_status = 'active', created_at = ?2 WHERE id = ?3",
      ).bind(jobA, twoHoursAgo, busy!.id),
      env.DB.prepare("UPDATE instances SET runner_status = 'idle', runner_status_changed_at = ?1, created_at = ?2 WHERE id = ?3").bind(
        Date.now(),
        twoHoursAgo,
        idle!.id,
      ),
    ]);
    await w.github.updateRunner(busy!.agent_id, { busy: true });

    const spy = vi.spyOn(console, "log");
    await reconcile(w.scaleSetId);
    let after = await rows(w.scaleSetId);
    // The idle one went the ordinary way: its GitHub runner removed, its machine deleted at the shim.
    expect(after.find((r) => r.id === idle!.id)!.status).toBe("deleted");
    expect(await pendingDeleteReason(idle!.id)).toEqual({ to_value: "pending_delete", reason: "max_lifetime: never_picked_up_job" });
    expect((await w.github.state()).runners.map((r) => r.name)).not.toContain(idle!.name);
    // The one on its job stays, machine and runner.
    expect(after.find((r) => r.id === busy!.id)!.status).toBe("running");
    expect((await w.shim.machines()).map((m) => m.name)).toEqual([busy!.name]);
    const lines = reapLines(spy).map((l) => JSON.parse(l));
    expect(lines).toEqual([
      expect.objectContaining({ event: "instance_reaped", scale_set: w.scaleSetId, instance: idle!.name, reason: "never_picked_up_job" }),
    ]);
    expect(lines[0].age_s).toBeGreaterThanOrEqual(7_200);
    expect(await reapedMetric(w.scaleSetId, "never_picked_up_job")).toBe(1);

    // Passes go on: still never the runner on its job.
    await reconcile(w.scaleSetId);
    expect((await rows(w.scaleSetId)).find((r) => r.id === busy!.id)!.status).toBe("running");

    // A hard cap applies even to it: its machine is force-deleted although GitHub calls the runner busy.
    const capped = await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { runner_lifetime_hard_cap_seconds: 3_600 });
    expect(capped.status, capped.text).toBe(200);
    await reconcile(w.scaleSetId);
    after = await rows(w.scaleSetId);
    expect(after.find((r) => r.id === busy!.id)!.status).toBe("deleted");
    expect(await pendingDeleteReason(busy!.id)).toEqual({ to_value: "pending_force_delete", reason: "max_lifetime: hard_cap" });
    expect(await w.shim.machines()).toEqual([]);
    expect(reapLines(spy).map((l) => JSON.parse(l).reason)).toEqual(["never_picked_up_job", "hard_cap"]);
    expect(await reapedMetric(w.scaleSetId, "hard_cap")).toBe(1);
  });

  it("with a lifetime of 0 reaps nothing for its age", async () => {
    const w = await scaleSetWorld(SHIM_SECRET, { max_runner_lifetime_seconds: 0 });
    const [job] = await queueJobs(w.scaleSetId, 1);
    await reconcile(w.scaleSetId);
    const [row] = await rows(w.scaleSetId);
    await env.DB.batch([
      env.DB.prepare("UPDATE jobs SET status = 'completed' WHERE id = ?").bind(job),
      env.DB.prepare("UPDATE instances SET runner_status = 'idle', runner_status_changed_at = ?1, created_at = ?2 WHERE id = ?3").bind(
        Date.now(),
        Date.now() - 400 * 24 * HOUR,
        row!.id,
      ),
    ]);
    await reconcile(w.scaleSetId);
    expect((await rows(w.scaleSetId))[0]!.status).toBe("running");
    expect(await pendingDeleteReason(row!.id)).toBeNull();
  });
});
