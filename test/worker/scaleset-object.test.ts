import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { readInstanceToken } from "../../src/scaleset/runner/instance-token";
import { nudgeScaleSet } from "../../src/scaleset/stub";
import { deliverOutbox } from "../fake-shim/control";
import { api, inScaleSetObject, transitionsOf } from "./helpers";
import { queueJobs, reconcile, scaleSetWorld } from "./scaleset-world";

const SHIM_SECRET = "scale-set-shim-secret-01";

const world = (over: Record<string, unknown> = {}) => scaleSetWorld(SHIM_SECRET, over);

async function instances(scaleSetId: string) {
  return (
    await env.DB.prepare("SELECT * FROM instances WHERE scale_set_id = ? ORDER BY created_at, name")
      .bind(scaleSetId)
      .all<Record<string, any>>()
  ).results;
}
const live = async (scaleSetId: string) => (await instances(scaleSetId)).filter((i) => i.status !== "deleted");

async function transitions(instanceId: string) {
  return (await transitionsOf(instanceId)).map(({ field, from_value, to_value, reason }) => ({ field, from_value, to_value, reason }));
}

/** The coordinator's runner DELETEs at GitHub since the world's requests were last cleared. */
async function runnerDeletes(w: { github: { requests(): Promise<{ method: string; path: string; status: number }[]> } }) {
  return (await w.github.requests())
    .filter((r) => r.method === "DELETE" && /\/actions\/runners\/\d+$/.test(r.path))
    .map((r) => ({ runner: Number(r.path.split("/").pop()), status: r.status }))
    .sort((a, b) => a.runner - b.runner);
}

/** Moves an instance's pending retry or poll into the past, as time passing would. */
const makeDue = (scaleSetId: string, name: string) =>
  inScaleSetObject(scaleSetId, (obj) =>
    obj.state.updateOps(name, {
      ...(obj.state.ops(name)?.retryAt ? { retryAt: 1 } : {}),
      ...(obj.state.ops(name)?.pollAt ? { pollAt: 1 } : {}),
    }),
  );

describe("ScaleSet object: creating", () => {
  it("creates one runner per queued job: a JIT runner at GitHub, then a machine at the shim", async () => {
    const w = await world({ jit_config_timing: "before_create" });
    await queueJobs(w.scaleSetId, 3);
    const status = await reconcile(w.scaleSetId);
    expect(status.last_reconcile).toMatchObject({ error: null, actions: { create: 3 } });

    const rows = await live(w.scaleSetId);
    expect(rows).toHaveLength(3);
    for (const r of rows) {
      expect(r).toMatchObject({ status: "running", runner_status: "pending", create_attempt: 1 });
      expect(r.name).toMatch(/^er-[a-z0-9]{12}$/);
      expect(r.provider_id).toEqual(expect.any(String));
      expect(r.agent_id).toEqual(expect.any(Number));
      expect(r.jit_config_enc).toMatch(/^er1\./);
      expect((await transitions(r.id)).map((t) => t.to_value)).toEqual(["pending_create", "creating", "running"]);
    }

    const machines = await w.shim.machines();
    expect(machines.map((m) => m.name).sort()).toEqual(rows.map((r) => r.name).sort());
    const boot = machines[0]!.bootstrap as Record<string, any>;
    expect(boot).toMatchObject({
      "metadata-url": "https://edgerunner.test/api/v1/metadata",
      "callback-url": "https://edgerunner.test/api/v1/callbacks",
      repo_url: "https://github.example.test/octo/app",
      pool_id: w.scaleSetId,
      jit_config_enabled: true,
      labels: null,
      image: "ubuntu:24.04",
      flavor: "small",
      os_type: "linux",
      arch: "amd64",
    });
    const claims = await readInstanceToken(env.INSTANCE_TOKEN_SECRET, boot["instance-token"]);
    expect(claims).toMatchObject({ sub: machines[0]!.name, ss: w.scaleSetId, att: 1 });

    const requests = await w.shim.requests();
    expect(requests.every((r) => r.signature_ok && r.pool_id === w.scaleSetId)).toBe(true);
    const gh = await w.github.state();
    expect(gh.runners.map((r) => r.name).sort()).toEqual(rows.map((r) => r.name).sort());
  });

  it("creates nothing more however often it is nudged or reconciled", async () => {
    const w = await world();
    await queueJobs(w.scaleSetId, 4);
    await reconcile(w.scaleSetId);
    await reconcile(w.scaleSetId);
    const stub = env.SCALE_SET.get(env.SCALE_SET.idFromName(w.scaleSetId));
    await Promise.all([stub.nudge(w.scaleSetId), stub.nudge(w.scaleSetId), reconcile(w.scaleSetId)]);
    await runDurableObjectAlarm(stub);
    expect(await live(w.scaleSetId)).toHaveLength(4);
    expect(await w.shim.machines()).toHaveLength(4);
  });

  it("reconciles when its alarm fires after a nudge", async () => {
    const w = await world();
    await queueJobs(w.scaleSetId, 2);
    const stub = env.SCALE_SET.get(env.SCALE_SET.idFromName(w.scaleSetId));
    await stub.nudge(w.scaleSetId);
    expect(await inScaleSetObject(w.scaleSetId, (_o, state) => state.storage.getAlarm())).not.toBeNull();
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await live(w.scaleSetId)).toHaveLength(2);
    // It re-arms itself for its next tick.
    expect(await inScaleSetObject(w.scaleSetId, (_o, state) => state.storage.getAlarm())).toBeGreaterThan(Date.now());
  });

  it("reconciles at once on a nudge when nudges are not delayed (production), leaving its tick armed", async () => {
    const w = await world();
    // Tests delay nudges an hour (NUDGE_DELAY_SECONDS) to drive alarms themselves; production has 0.
    await inScaleSetObject(w.scaleSetId, (obj) => {
      obj.settings.nudgeDelayMs = 0;
    });
    await queueJobs(w.scaleSetId, 2);
    const stub = env.SCALE_SET.get(env.SCALE_SET.idFromName(w.scaleSetId));
    const spy = vi.spyOn(console, "log");
    await stub.nudge(w.scaleSetId);
    // The nudge's own pass creates both runners, not an alarm armed for now.
    for (let i = 0; i < 100 && (await w.shim.machines()).length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await w.shim.machines()).toHaveLength(2);
    expect(await live(w.scaleSetId)).toHaveLength(2);
    const plans = spy.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('"event":"plan"') && l.includes(w.scaleSetId));
    // (A pass that acted is followed by another in the same run.)
    expect(new Set(plans.map((l) => JSON.parse(l).trigger))).toEqual(new Set(["nudge"]));
    spy.mockRestore();
    // The alarm stays the safety net: armed for the next tick, not for now.
    const status = await stub.status(w.scaleSetId);
    expect(status.last_reconcile).toMatchObject({ error: null, actions: { create: 2 } });
    expect(Date.parse(status.next_wake_at!)).toBeGreaterThan(Date.now());
  });

  it("never goes above max_runners, and keeps min_idle_runners", async () => {
    const capped = await world({ max_runners: 3 });
    await queueJobs(capped.scaleSetId, 8);
    const status = await reconcile(capped.scaleSetId);
    expect(await live(capped.scaleSetId)).toHaveLength(3);
    expect(status.last_reconcile.summary).toMatchObject({ desired: 3 });

    const idle = await world({ min_idle_runners: 2 });
    await reconcile(idle.scaleSetId);
    expect(await live(idle.scaleSetId)).toHaveLength(2);
  });

  it("creates nothing while disabled, and starts at once when enabled", async () => {
    const w = await world({ enabled: false });
    await queueJobs(w.scaleSetId, 2);
    const status = await reconcile(w.scaleSetId);
    expect(await live(w.scaleSetId)).toHaveLength(0);
    expect(status.last_reconcile.summary.blocked).toBe("disabled");
    expect((await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { enabled: true })).status).toBe(200);
    // The update nudged the object: its alarm is set, and firing it creates the runners.
    await runDurableObjectAlarm(env.SCALE_SET.get(env.SCALE_SET.idFromName(w.scaleSetId)));
    expect(await live(w.scaleSetId)).toHaveLength(2);
  });

  it("takes a 202 from the shim and finishes the create when the callback comes", async () => {
    const w = await world();
    await w.shim.configure({ callbackUrl: "https://edgerunner.test/api/v1/providers/cb/callbacks" });
    const provider = (await api.get("/api/v1/providers")).body.find((p: any) => p.url === w.shim.url);
    await w.shim.configure({ callbackUrl: `https://edgerunner.test/api/v1/providers/${provider.name}/callbacks` });
    await w.shim.addRule({ operation: "create", action: { type: "async", complete_after_ms: 1, callback: "outbox" } });
    await queueJobs(w.scaleSetId, 1);
    const status = await reconcile(w.scaleSetId);
    expect(status.pending_operations).toBe(1);
    const [row] = await live(w.scaleSetId);
    expect(row).toMatchObject({ status: "creating" });

    let delivered: Awaited<ReturnType<typeof deliverOutbox>> = [];
    for (let i = 0; i < 50 && !delivered.length; i++) {
      await new Promise((r) => setTimeout(r, 20));
      delivered = await deliverOutbox(w.shim, (r) => exports.default.fetch(r));
    }
    expect(delivered.map((d) => [d.status, d.body])).toEqual([[200, { accepted: true }]]);
    expect((await live(w.scaleSetId))[0]).toMatchObject({ status: "running", provider_id: expect.any(String) });
    // A repeated callback is not waited for any more.
    const again = await exports.default.fetch(
      new Request(`https://edgerunner.test${delivered[0]!.callback.path}`, {
        method: "POST",
        headers: delivered[0]!.callback.headers,
        body: delivered[0]!.callback.body,
      }),
    );
    expect(await again.json()).toEqual({ accepted: false });
  });

  it("creates through a slow shim, and overlapping reconciles wait for it instead of doubling", async () => {
    const w = await world();
    await w.shim.setFaults({ latency_ms: { create: 400 } });
    await queueJobs(w.scaleSetId, 6);
    await Promise.all([reconcile(w.scaleSetId), reconcile(w.scaleSetId), reconcile(w.scaleSetId)]);
    expect(await live(w.scaleSetId)).toHaveLength(6);
    expect((await live(w.scaleSetId)).every((r) => r.status === "running")).toBe(true);
    expect(await w.shim.machines()).toHaveLength(6);
  });

  it("serves a job nudged in while a run is under way: the run goes once more instead of leaving it for the next tick", async () => {
    const w = await world();
    // A run that plans nothing, then spends a while on the drift check (a slow cloud listing).
    await reconcile(w.scaleSetId);
    await inScaleSetObject(w.scaleSetId, (obj) => {
      obj.state.lastOrphanCheck = 0;
    });
    await w.shim.setFaults({ latency_ms: { list: 1_000 } });
    const run = reconcile(w.scaleSetId);
    await new Promise((r) => setTimeout(r, 300));
    // A webhook's job and its nudge arrive after the run read D1. (Tests keep nudge delays an
    // hour long, so only the run under way can serve it.)
    await queueJobs(w.scaleSetId, 1);
    await nudgeScaleSet(env, w.scaleSetId);
    await run;
    expect(await live(w.scaleSetId)).toHaveLength(1);
    expect(await w.shim.machines()).toHaveLength(1);
  });

  it("does not hold the scale set up for a create the shim is slow to answer: it settles in the background", async () => {
    const w = await world();
    // Longer than a pass waits for its creates (2 s), shorter than the shim timeout.
    await w.shim.setFaults({ latency_ms: { create: 3_500 } });
    await queueJobs(w.scaleSetId, 1);
    await reconcile(w.scaleSetId);
    // The pass is over while the shim still holds the create.
    expect((await live(w.scaleSetId)).map((r) => r.status)).toEqual(["creating"]);
    // Meanwhile the scale set keeps working, and does not create the same runner twice.
    await queueJobs(w.scaleSetId, 1);
    await reconcile(w.scaleSetId);
    expect(await live(w.scaleSetId)).toHaveLength(2);
    let rows = await live(w.scaleSetId);
    for (let i = 0; i < 100 && !rows.every((r) => r.status === "running"); i++) {
      await new Promise((r) => setTimeout(r, 100));
      rows = await live(w.scaleSetId);
    }
    expect(rows.map((r) => r.status)).toEqual(["running", "running"]);
    expect(await w.shim.machines()).toHaveLength(2);
  }, 20_000);

  it("records each create as its answer comes: a hung one hides no other, and fails at the provider's timeout", async () => {
    const w = await scaleSetWorld(SHIM_SECRET, {}, { timeout_seconds: 4 });
    await w.shim.addRule({ operation: "create", action: { type: "hang" } });
    await queueJobs(w.scaleSetId, 3);
    await reconcile(w.scaleSetId);
    // The pass is over: the two machines the shim made are known, the third is still being asked for.
    const rows = await live(w.scaleSetId);
    expect(rows.map((r) => r.status).sort()).toEqual(["creating", "running", "running"]);
    const hung = rows.find((r) => r.status === "creating")!;
    // The provider's own timeout (4 s, not the 30 s default) ends the hung call; the row fails and goes.
    let row: Record<string, any> | undefined;
    for (let i = 0; i < 120; i++) {
      row = (await instances(w.scaleSetId)).find((r) => r.id === hung.id);
      if (row?.provider_fault) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(row!.provider_fault).toMatch(/no answer within 4000 ms/);
    expect((await transitions(hung.id)).map((t) => t.to_value)).toContain("error");
  }, 30_000);

  it("asks the shim itself when a callback does not come in time", async () => {
    const w = await world();
    await w.shim.addRule({ operation: "create", action: { type: "async", complete_after_ms: 1, callback: "never" } });
    await queueJobs(w.scaleSetId, 1);
    await reconcile(w.scaleSetId);
    const [row] = await live(w.scaleSetId);
    expect(row!.status).toBe("creating");
    await new Promise((r) => setTimeout(r, 20));
    await makeDue(w.scaleSetId, row!.name);
    await reconcile(w.scaleSetId);
    expect((await live(w.scaleSetId))[0]).toMatchObject({ name: row!.name, status: "running", provider_id: expect.any(String) });
    expect((await w.shim.requests()).some((r) => r.operation === "get")).toBe(true);
  });
});

describe("ScaleSet object: failures and backoff", () => {
  it("turns a failing create into a provider fault, deletes the instance, and backs off the scale set", async () => {
    const w = await world();
    await w.shim.addRule({ operation: "create", action: { type: "respond", status: 500, body: { error: "hypervisor on fire" } } });
    await queueJobs(w.scaleSetId, 1);
    const status = await reconcile(w.scaleSetId);
    const [row] = await instances(w.scaleSetId);
    expect(row!.provider_fault).toMatch(/retryable \(500\)/);
    expect((await transitions(row!.id)).map((t) => t.to_value)).toEqual(
      expect.arrayContaining(["creating", "error", "pending_delete", "deleting", "deleted"]),
    );
    expect(row!.status).toBe("deleted");
    expect(status.create_backoff).toMatchObject({ failures: 1, hard_limited_at: null, create_allowed_at: expect.any(String) });
    // Still needed, but not before the backoff ends.
    expect(status.last_reconcile.summary.blocked).toBe("create_backoff");
    expect(await live(w.scaleSetId)).toHaveLength(0);
  });

  it.each([
    ["garbage", { type: "respond", status: 200, body: "<html>oops</html>" }, /malformed/],
    ["a machine without a provider id", { type: "respond", status: 200, body: { name: "x", status: "running" } }, /malformed/],
    ["a permanent 400", { type: "respond", status: 400, body: { error: "no such image" } }, /permanent \(400\)/],
  ])("records %s from the shim as a provider fault, never a crash", async (_, action, fault) => {
    const w = await world();
    await w.shim.addRule({ operation: "create", action: action as any });
    await queueJobs(w.scaleSetId, 1);
    const status = await reconcile(w.scaleSetId);
    expect(status.last_reconcile.error).toBeNull();
    const [row] = await instances(w.scaleSetId);
    expect(row!.provider_fault).toMatch(fault);
  });

  it("stops creating after the hard limit of straight failures, until reset or update", async () => {
    const w = await world();
    await w.shim.addRule({ operation: "create", times: 5, action: { type: "respond", status: 500 } });
    await queueJobs(w.scaleSetId, 5);
    let status = await reconcile(w.scaleSetId);
    expect(status.create_backoff).toMatchObject({ failures: 5, hard_limited_at: expect.any(String), create_allowed_at: null });
    expect(status.last_reconcile.summary.blocked).toBe("hard_limit");
    expect((await api.get(`/api/v1/scalesets/${w.scaleSetId}`)).body.status.create_backoff.hard_limited_at).toEqual(expect.any(String));

    status = (await api.post(`/api/v1/scalesets/${w.scaleSetId}/reset`)).body;
    expect(status.create_backoff).toMatchObject({ failures: 0, hard_limited_at: null });
    await reconcile(w.scaleSetId);
    expect(await live(w.scaleSetId)).toHaveLength(5);
  });

  it("lifts the hard limit when the scale set is updated", async () => {
    const w = await world();
    await w.shim.addRule({ operation: "create", times: 5, action: { type: "respond", status: 500 } });
    await queueJobs(w.scaleSetId, 5);
    await reconcile(w.scaleSetId);
    await new Promise((r) => setTimeout(r, 5));
    await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { flavor: "medium" });
    const status = await reconcile(w.scaleSetId);
    expect(status.create_backoff.hard_limited_at).toBeNull();
    expect(await live(w.scaleSetId)).toHaveLength(5);
  });

  it("retries a failing delete after 1 s, doubling, and a force delete goes through anyway", async () => {
    const w = await world();
    await queueJobs(w.scaleSetId, 1);
    await reconcile(w.scaleSetId);
    const [row] = await live(w.scaleSetId);
    await w.shim.addRule({ operation: "delete", times: 10, action: { type: "respond", status: 503 } });
    expect((await api.delete(`/api/v1/instances/${row!.name}`)).status).toBe(202);

    const delays: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt++) {
      const before = Date.now();
      await reconcile(w.scaleSetId);
      const ops = await inScaleSetObject(w.scaleSetId, (obj) => obj.state.ops(row!.name));
      expect(ops.deleteAttempts).toBe(attempt);
      delays.push(Math.round((ops.retryAt - before) / 1000));
      expect((await live(w.scaleSetId))[0]).toMatchObject({ status: "pending_delete", provider_fault: expect.stringMatching(/503/) });
      // Not before its time...
      await reconcile(w.scaleSetId);
      expect((await inScaleSetObject(w.scaleSetId, (obj) => obj.state.ops(row!.name))).deleteAttempts).toBe(attempt);
      await makeDue(w.scaleSetId, row!.name);
    }
    expect(delays).toEqual([1, 2, 4, 8]);

    expect((await api.delete(`/api/v1/instances/${row!.name}?force=true`)).body).toEqual({
      name: row!.name,
      status: "pending_force_delete",
    });
    await reconcile(w.scaleSetId);
    expect((await instances(w.scaleSetId))[0]).toMatchObject({ status: "deleted" });
    const reasons = (await transitions(row!.id)).map((t) => t.reason);
    expect(reasons.at(-1)).toMatch(/forced past provider error/);
  });

  it("treats a 404 on delete as done", async () => {
    const w = await world();
    await queueJobs(w.scaleSetId, 1);
    await reconcile(w.scaleSetId);
    const [row] = await live(w.scaleSetId);
    await w.shim.removeMachine(row!.name);
    await api.delete(`/api/v1/instances/${row!.name}`);
    await reconcile(w.scaleSetId);
    expect((await instances(w.scaleSetId))[0]!.status).toBe("deleted");
  });

  it("answers admin deletes of unknown or deleted instances clearly", async () => {
    const w = await world();
    expect((await api.delete("/api/v1/instances/nope")).status).toBe(404);
    await queueJobs(w.scaleSetId, 1);
    await reconcile(w.scaleSetId);
    const [row] = await live(w.scaleSetId);
    await api.delete(`/api/v1/instances/${row!.name}`);
    await reconcile(w.scaleSetId);
    const res = await api.delete(`/api/v1/instances/${row!.name}`);
    expect(res.status).toBe(409);
    expect((await api.delete(`/api/v1/instances/${row!.name}?force=maybe`)).status).toBe(400);
  });
});

describe("ScaleSet object: lifecycle", () => {
  it("deletes an ephemeral runner whose job completed", async () => {
    const w = await world();
    const [job] = await queueJobs(w.scaleSetId, 1);
    await reconcile(w.scaleSetId);
    const [row] = await live(w.scaleSetId);
    await env.DB.batch([
      env.DB.prepare("UPDATE jobs SET status = 'completed' WHERE id = ?").bind(job),
      env.DB.prepare(
        "UPDATE instances SET job_id = ?1, job_seq = (SELECT seq FROM jobs WHERE id = ?1), runner_status = 'active' WHERE id = ?2",
      ).bind(job, row!.id),
    ]);
    await w.github.clearRequests();
    await reconcile(w.scaleSetId);
    expect((await instances(w.scaleSetId))[0]).toMatchObject({ status: "deleted" });
    expect((await transitions(row!.id)).find((t) => t.to_value === "pending_delete")!.reason).toBe("job_completed");
    expect(await w.shim.machines()).toHaveLength(0);
    // GitHub unregisters an ephemeral runner after its job itself: no call to GitHub for it.
    expect(await runnerDeletes(w)).toEqual([]);
  });

  it("reaps a runner that is not idle within the bootstrap timeout", async () => {
    const w = await world({ bootstrap_timeout: 1, jit_config_timing: "before_create" });
    await queueJobs(w.scaleSetId, 1);
    await reconcile(w.scaleSetId);
    const [row] = await live(w.scaleSetId);
    await env.DB.prepare("UPDATE instances SET created_at = created_at - 61000 WHERE id = ?").bind(row!.id).run();
    await w.github.clearRequests();
    await reconcile(w.scaleSetId);
    const reaped = (await instances(w.scaleSetId)).find((i) => i.id === row!.id)!;
    expect(reaped.status).toBe("deleted");
    expect((await transitions(row!.id)).find((t) => t.to_value === "pending_delete")!.reason).toBe("bootstrap_timeout");
    // It never took a job, so GitHub still has its runner: we remove it.
    expect(await runnerDeletes(w)).toEqual([{ runner: row!.agent_id, status: 204 }]);
    expect((await w.github.state()).runners.map((r) => r.name)).not.toContain(row!.name);
    // The job is still queued, so a replacement comes up.
    expect(await live(w.scaleSetId)).toHaveLength(1);
  });

  it("scales idle surplus down after the idle time, removing the GitHub runner first, and keeps a runner that got busy", async () => {
    const w = await world({ jit_config_timing: "before_create" });
    const jobs = await queueJobs(w.scaleSetId, 2);
    await reconcile(w.scaleSetId);
    const rows = await live(w.scaleSetId);
    // The jobs went elsewhere; both runners idle, long enough to go.
    await env.DB.batch([
      env.DB.prepare(`UPDATE jobs SET status = 'completed' WHERE id IN (${jobs.join(",")})`),
      env.DB.prepare("UPDATE instances SET runner_status = 'idle', runner_status_changed_at = ? WHERE scale_set_id = ?").bind(
        Date.now() - 3_600_000,
        w.scaleSetId,
      ),
    ]);
    const busy = rows[1]!;
    // GitHub gave it a job meanwhile: it refuses to remove a busy runner (422).
    await w.github.updateRunner(busy.agent_id, { busy: true });
    await w.github.clearRequests();
    await reconcile(w.scaleSetId);
    const after = await instances(w.scaleSetId);
    expect(after.find((i) => i.id === rows[0]!.id)!.status).toBe("deleted");
    expect(after.find((i) => i.id === busy.id)!.status).toBe("running");
    expect((await transitions(busy.id)).at(-1)!.reason).toMatch(/took a job/);
    const ghRunners = (await w.github.state()).runners.map((r) => r.name);
    expect(ghRunners).not.toContain(rows[0]!.name);
    // Idle ones never took a job, so only we can remove them; the busy one answers 422 (asked again while still idle-long).
    const deletes = await runnerDeletes(w);
    expect(deletes.filter((d) => d.runner === rows[0]!.agent_id)).toEqual([{ runner: rows[0]!.agent_id, status: 204 }]);
    expect(new Set(deletes.filter((d) => d.runner !== rows[0]!.agent_id).map((d) => `${d.runner} ${d.status}`))).toEqual(
      new Set([`${busy.agent_id} 422`]),
    );
  });

  it("takes a 404 from GitHub's runner DELETE as removed: the runner is already gone", async () => {
    const w = await world({ jit_config_timing: "before_create" });
    const jobs = await queueJobs(w.scaleSetId, 1);
    await reconcile(w.scaleSetId);
    const [row] = await live(w.scaleSetId);
    await env.DB.batch([
      env.DB.prepare(`UPDATE jobs SET status = 'completed' WHERE id = ?`).bind(jobs[0]),
      env.DB.prepare("UPDATE instances SET runner_status = 'idle', runner_status_changed_at = ? WHERE id = ?").bind(
        Date.now() - 3_600_000,
        row!.id,
      ),
    ]);
    // Someone removed the runner at GitHub behind the coordinator's back.
    const gone = await fetch(`${w.github.url}/repos/octo/app/actions/runners/${row!.agent_id}`, {
      method: "DELETE",
      headers: { authorization: "Bearer ghp_test_token" },
    });
    expect(gone.status).toBe(204);
    await w.github.clearRequests();
    await reconcile(w.scaleSetId);
    expect(await runnerDeletes(w)).toEqual([{ runner: row!.agent_id, status: 404 }]);
    expect((await instances(w.scaleSetId))[0]).toMatchObject({ status: "deleted" });
    expect(await w.shim.machines()).toHaveLength(0);
  });

  it("keeps idle runners that have not idled long enough", async () => {
    const w = await world();
    const jobs = await queueJobs(w.scaleSetId, 1);
    await reconcile(w.scaleSetId);
    await env.DB.batch([
      env.DB.prepare(`UPDATE jobs SET status = 'completed' WHERE id = ?`).bind(jobs[0]),
      env.DB.prepare("UPDATE instances SET runner_status = 'idle', runner_status_changed_at = ? WHERE scale_set_id = ?").bind(
        Date.now(),
        w.scaleSetId,
      ),
    ]);
    await reconcile(w.scaleSetId);
    expect(await live(w.scaleSetId)).toHaveLength(1);
  });
});

describe("ScaleSet object: lost webhooks", () => {
  it("re-checks old queued jobs at GitHub and stops serving the ones GitHub finished", async () => {
    const w = await world({ enabled: false });
    const [finished, running, stillQueued, unknown] = await queueJobs(w.scaleSetId, 4);
    await env.DB.prepare(`UPDATE jobs SET queued_at = ? WHERE id IN (${[finished, running, stillQueued, unknown].join(",")})`)
      .bind(Date.now() - 60 * 60_000)
      .run();
    await w.github.putJobs(
      { id: finished!, repository: "octo/app", status: "completed", conclusion: "success" },
      { id: running!, repository: "octo/app", status: "in_progress" },
      { id: stillQueued!, repository: "octo/app", status: "queued" },
    );
    await reconcile(w.scaleSetId);
    const statuses = async () =>
      Object.fromEntries(
        (
          await env.DB.prepare(`SELECT id, status FROM jobs WHERE id IN (${[finished, running, stillQueued, unknown].join(",")})`).all<{
            id: number;
            status: string;
          }>()
        ).results.map((r) => [r.id, r.status]),
      );
    expect(await statuses()).toEqual({
      [finished!]: "completed",
      [running!]: "in_progress",
      [stillQueued!]: "queued",
      [unknown!]: "queued",
    });
    const asked = async () => (await w.github.requests()).filter((r) => r.path.includes("/actions/jobs/")).length;
    expect(await asked()).toBe(4);
    // Not asked again right away.
    await reconcile(w.scaleSetId);
    expect(await asked()).toBe(4);
  });
});

describe("ScaleSet object: drift and crashes", () => {
  it("deletes cloud machines it has no instance for, and closes instances whose machine is gone", async () => {
    const w = await world();
    await queueJobs(w.scaleSetId, 2);
    await reconcile(w.scaleSetId);
    const [gone, kept] = await live(w.scaleSetId);
    await w.shim.seedMachine({ pool_id: w.scaleSetId, name: "er-orphan00000" });
    await w.shim.removeMachine(gone!.name);
    await inScaleSetObject(w.scaleSetId, (obj) => (obj.state.lastOrphanCheck = 0));
    await reconcile(w.scaleSetId);
    await reconcile(w.scaleSetId);
    const names = (await w.shim.machines()).map((m) => m.name);
    expect(names).not.toContain("er-orphan00000");
    expect(names).toContain(kept!.name);
    const closed = (await instances(w.scaleSetId)).find((i) => i.id === gone!.id)!;
    expect(closed.status).toBe("deleted");
    expect((await transitions(gone!.id)).some((t) => t.reason === "machine is gone from the provider")).toBe(true);
  });

  it("removes GitHub runners with its prefix that no live instance has", async () => {
    const w = await world();
    await w.github.seed({
      runners: [
        { scope: "repos/octo/app", name: "er-leftover0000", id: 555 },
        { scope: "repos/octo/app", name: "someone-else", id: 556 },
      ],
    });
    await reconcile(w.scaleSetId);
    expect((await w.github.state()).runners).toHaveLength(2);
    await inScaleSetObject(w.scaleSetId, (obj) => (obj.state.lastOrphanCheck = 0));
    await reconcile(w.scaleSetId);
    const names = (await w.github.state()).runners.map((r) => r.name);
    expect(names).not.toContain("er-leftover0000");
    expect(names).toContain("someone-else");
  });

  it("resolves instances left creating or deleting by an eviction by asking the shim", async () => {
    const w = await world();
    await queueJobs(w.scaleSetId, 2);
    await reconcile(w.scaleSetId);
    const [a, b] = await live(w.scaleSetId);
    // As if the object died mid-operation: rows stuck, nothing in flight, machines as they are.
    const old = Date.now() - 10 * 60_000;
    await env.DB.batch([
      env.DB.prepare("UPDATE instances SET status = 'creating', status_changed_at = ? WHERE id = ?").bind(old, a!.id),
      env.DB.prepare("UPDATE instances SET status = 'deleting', status_changed_at = ? WHERE id = ?").bind(old, b!.id),
    ]);
    await w.shim.removeMachine(b!.name);
    await reconcile(w.scaleSetId);
    const rows = await instances(w.scaleSetId);
    expect(rows.find((r) => r.id === a!.id)!.status).toBe("running");
    expect(rows.find((r) => r.id === b!.id)!.status).toBe("deleted");
  });

  it("forgets everything when its scale set is deleted", async () => {
    const w = await world();
    await reconcile(w.scaleSetId);
    expect((await api.delete(`/api/v1/scalesets/${w.scaleSetId}`)).status).toBe(204);
    const stub = env.SCALE_SET.get(env.SCALE_SET.idFromName(w.scaleSetId));
    await runDurableObjectAlarm(stub);
    expect(await inScaleSetObject(w.scaleSetId, (obj) => obj.state.scaleSetId)).toBeNull();
  });
});

describe("ScaleSet object: cost", () => {
  it("uses the same number of D1 round trips for 5 and 60 new runners", async () => {
    const trips: number[] = [];
    for (const n of [5, 60]) {
      const w = await world({ max_runners: 100 });
      // A GitHub budget that pays for all 60 at once: its reservation is one of the round trips counted.
      await inScaleSetObject(w.scaleSetId, (obj) => {
        obj.settings.githubBudget = { pointsPerMinute: 100_000, windowMs: 60_000 };
      });
      await queueJobs(w.scaleSetId, n);
      const status = await reconcile(w.scaleSetId);
      expect(await live(w.scaleSetId)).toHaveLength(n);
      trips.push(status.last_reconcile.d1RoundTrips);
    }
    expect(trips[0]).toBe(trips[1]);
  });
});
