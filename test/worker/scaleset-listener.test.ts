/**
 * A scale set in scaleset_api intake: its object registers the runner scale set at the fake
 * GitHub, keeps a session, and long-polls the message queue; job events land in D1 like
 * webhook-fed ones, and runners come from the scale set's own generatejitconfig.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { scaleSetObject } from "../../src/scaleset/stub";
import { runnerSession } from "../fake-github/control-client";
import { clone, workflowJobExamples } from "../fixtures/webhook-examples";
import { api, inScaleSetObject } from "./helpers";
import { listenerWorld } from "./scaleset-world";
import { deliver } from "./webhook-setup";

const SHIM_SECRET = "scale-set-listener-secret";
const apiWorld = (over: Record<string, unknown> = {}) => listenerWorld(SHIM_SECRET, over);

describe("scale set API intake", () => {
  it("is chosen per scale set, shown by the API, and needs JIT", async () => {
    const w = await apiWorld();
    const shown = await api.get(`/api/v1/scalesets/${w.scaleSetId}`);
    expect(shown.body).toMatchObject({ intake: "scaleset_api", jit_config_enabled: true });
    const refused = await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { jit_config_enabled: false });
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: "jit_config_enabled" })]));
    const bad = await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { intake: "pull" });
    expect(bad.status).toBe(400);
    expect((await api.get(`/api/v1/scalesets/${w.scaleSetId}`)).body.intake).toBe("scaleset_api");
  });

  it("registers the runner scale set, plays a job through the queue into D1, and runs it on a runner from the scale set's JIT", async () => {
    const w = await apiWorld({ min_idle_runners: 0 });
    await w.open();
    const gh = await w.github.actionsState();
    expect(gh.scale_sets).toEqual([expect.objectContaining({ name: w.name, runnerGroupName: "Default" })]);
    expect(gh.scale_sets[0]!.labels.map((l) => l.name)).toEqual(expect.arrayContaining([w.name, "self-hosted", "linux"]));
    expect(gh.sessions).toHaveLength(1);
    expect(await w.liveInstances()).toHaveLength(0);

    const [queued] = await w.github.queueJobs({ repository: "octo/app", labels: [w.name], name: "build" });
    // JobAvailable: acquired, nothing stored yet (not ours until assigned).
    await w.listen();
    const acquired = (await w.github.actionsState()).jobs.find((j) => j.job_id === queued!.id)!;
    expect(acquired.state).toBe("assigned");
    expect(await w.job(acquired.runner_request_id)).toBeNull();
    // JobAssigned: a queued job in D1, routed to the scale set; statistics want a runner; one is made from the scale set's JIT.
    const status = await w.listen();
    expect(status.listener).toMatchObject({ statistics: { totalAssignedJobs: 1 }, failures: 0 });
    expect(await w.job(acquired.runner_request_id)).toMatchObject({
      status: "queued",
      scale_set_id: w.scaleSetId,
      repository: "octo/app",
      name: "build",
    });
    const [instance] = await w.liveInstances();
    expect(instance).toMatchObject({ status: "running" });
    const agents = (await w.github.actionsState()).agents;
    expect(agents[String(instance!.agent_id)]).toBe(gh.scale_sets[0]!.id);

    // The machine's runner connects with its JIT files and takes the job.
    const files = (await w.github.state()).jit_configs[instance!.name]!;
    const clientId = JSON.parse(atob(files[".credentials"]!)).data.clientId;
    const runner = runnerSession(w.github.url);
    expect((await runner.connect({ agent_id: instance!.agent_id, name: instance!.name, client_id: clientId })).status).toBe(200);
    expect((await runner.acquire(instance!.agent_id)).body).toMatchObject({ id: queued!.id });
    await w.listen();
    expect(await w.job(acquired.runner_request_id)).toMatchObject({ status: "in_progress", runner_name: instance!.name });
    expect((await w.liveInstances())[0]).toMatchObject({ job_id: acquired.runner_request_id });
    expect((await runner.complete(instance!.agent_id, queued!.id)).status).toBe(200);
    await w.listen();
    expect(await w.job(acquired.runner_request_id)).toMatchObject({ status: "completed", conclusion: "success" });
    // Done: the instance goes, and every message was acknowledged.
    expect((await w.liveInstances())[0]?.status ?? "deleted").not.toBe("running");
    expect(Object.values((await w.github.actionsState()).pending_messages).flat()).toEqual([]);
    // Merged like webhook events, but not counted as webhook deliveries.
    const carried = await env.DB.prepare("SELECT event, action FROM webhook_deliveries WHERE job_id = ? ORDER BY received_at")
      .bind(acquired.runner_request_id)
      .all();
    expect(carried.results).toEqual([
      { event: "scaleset_message", action: "queued" },
      { event: "scaleset_message", action: "in_progress" },
      { event: "scaleset_message", action: "completed" },
    ]);
  });

  it("a message that is not acknowledged comes back and changes nothing twice", async () => {
    const w = await apiWorld();
    await w.open();
    await w.github.queueJobs({ repository: "octo/app", labels: [w.name] });
    await w.listen(); // acquire
    await w.github.fault({ kind: "server_error", status: 503, method: "DELETE", path: "/_queue/" });
    const failed = await w.listen(); // JobAssigned stored, ack refused
    expect(failed.listener).toMatchObject({ failures: 1, last_message_id: 1 });
    expect(failed.listener?.last_error).toContain("retryable");
    const again = await w.listen(); // the same message: stored again (no-op), acked
    expect(again.listener).toMatchObject({ failures: 0, last_message_id: 2 });
    const rows = (await env.DB.prepare("SELECT count(*) AS n FROM jobs WHERE scale_set_id = ?").bind(w.scaleSetId).first<{ n: number }>())!;
    expect(rows.n).toBe(1);
    expect(await w.liveInstances()).toHaveLength(1);
  });

  it("refreshes the session on a 401 and keeps its place in the queue", async () => {
    const w = await apiWorld();
    await w.open();
    const before = (await w.github.actionsState()).sessions[0]!.session_id;
    await w.github.expireActionsTokens({ queue: true, admin: true });
    const refused = await w.listen();
    expect(refused.listener?.last_error).toContain("unauthorized");
    await w.listen(); // refresh (a new admin token first)
    await w.github.queueJobs({ repository: "octo/app", labels: [w.name] });
    const polled = await w.listen();
    expect(polled.listener).toMatchObject({ failures: 0, last_message_id: expect.any(Number) });
    expect((await w.github.actionsState()).sessions.map((s) => s.session_id)).toEqual([before]);
    expect((await w.github.actionsState()).jobs[0]!.state).toBe("assigned");
  });

  it("backs off while another session holds the scale set, and takes over once it is gone", async () => {
    const w = await apiWorld();
    await w.github.fault({ kind: "session_conflict", path: "/sessions", times: 2 });
    await w.listen(); // register
    const c1 = await w.listen();
    expect(c1.listener).toMatchObject({ session_open: false, failures: 1 });
    expect(c1.listener?.last_error).toContain("conflict");
    expect(Date.parse(c1.listener!.retry_at!)).toBeGreaterThan(Date.now() + 20_000);
    expect((await w.listen()).listener?.session_open).toBe(false);
    expect((await w.listen()).listener).toMatchObject({ session_open: true, failures: 0, retry_at: null });
  });

  it("backs off on 5xx without losing its session", async () => {
    const w = await apiWorld();
    await w.open();
    await w.github.fault({ kind: "server_error", status: 502, path: "/_queue/" });
    const failed = await w.listen();
    expect(failed.listener).toMatchObject({ session_open: true, failures: 1 });
    expect(Date.parse(failed.listener!.retry_at!)).toBeGreaterThan(Date.now());
    expect((await w.listen()).listener).toMatchObject({ failures: 0, session_open: true });
  });

  it("registers again when GitHub deleted the runner scale set", async () => {
    const w = await apiWorld();
    await w.open();
    const old = (await w.github.actionsState()).scale_sets[0]!.id;
    await w.github.deleteRunnerScaleSet(old);
    // Poll 401 (the session went with it), refresh 404, open 404, register, open.
    for (let i = 0; i < 8; i++) {
      const st = (await w.listen()).listener;
      if (st?.session_open && st.github_scale_set_id !== old) break;
    }
    const gh = await w.github.actionsState();
    expect(gh.scale_sets).toHaveLength(1);
    expect(gh.scale_sets[0]!.id).not.toBe(old);
    expect(gh.sessions).toEqual([expect.objectContaining({ scale_set_id: gh.scale_sets[0]!.id })]);
  });

  it("registers at once after a nudge that reconciles at once (production), not a tick later", async () => {
    const w = await apiWorld();
    // Tests delay nudges and the listener's steps an hour to drive the object themselves; production has 0 for both.
    await inScaleSetObject(w.scaleSetId, (obj) => {
      obj.settings.nudgeDelayMs = 0;
      obj.listener.rearmMs = 0;
    });
    try {
      await scaleSetObject(env, w.scaleSetId).nudge(w.scaleSetId);
      // Its own alarm registers the runner scale set (the tick is an hour away): jobs queued now find it.
      let registered = 0;
      // Bounded by the alarm firing, which a loaded machine may delay: up to 15 s, no timing asserted.
      for (let i = 0; i < 300 && !registered; i++) {
        registered = (await w.github.actionsState()).scale_sets.length;
        if (!registered) await new Promise((r) => setTimeout(r, 50));
      }
      expect(registered).toBe(1);
    } finally {
      await inScaleSetObject(w.scaleSetId, (obj) => {
        obj.settings.nudgeDelayMs = 3_600_000;
        obj.listener.rearmMs = 3_600_000;
      });
    }
  }, 30_000);

  it("closes its session when disabled, opens one when enabled again, and unregisters when deleted", async () => {
    const w = await apiWorld();
    await w.open();
    expect((await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { enabled: false })).status).toBe(200);
    expect((await w.listen()).listener?.session_open).toBe(false);
    expect((await w.github.actionsState()).sessions).toEqual([]);
    expect((await w.github.actionsState()).scale_sets).toHaveLength(1);
    expect((await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { enabled: true })).status).toBe(200);
    await w.open();
    expect((await api.delete(`/api/v1/scalesets/${w.scaleSetId}`)).status).toBe(204);
    await w.listen();
    const gh = await w.github.actionsState();
    expect(gh.sessions).toEqual([]);
    expect(gh.scale_sets).toEqual([]);
  });

  it("links its runners to jobs only through the queue: a webhook for the same job does not", async () => {
    const w = await apiWorld();
    await w.open();
    await w.github.queueJobs({ repository: "octo/app", labels: [w.name] });
    await w.listen(); // acquire
    await w.listen(); // assigned: a runner is made
    const [instance] = await w.liveInstances();
    expect(instance).toBeDefined();
    // GitHub also sends the repository's hook a workflow_job for it, under the REST job id.
    const p = clone(workflowJobExamples.find((e) => e.payload.action === "in_progress")!.payload);
    Object.assign(p.repository, { name: "app", full_name: "octo/app" });
    p.repository.owner.login = "octo";
    Object.assign(p.workflow_job, { id: 880_000_000 + Math.floor(Math.random() * 1e6), runner_name: instance!.name, labels: [w.name] });
    const res = await deliver(p, "whsec-12345678", { headers: { "x-github-enterprise-host": "github.example.test" } });
    expect(res.status).toBeLessThan(300);
    expect((await w.liveInstances())[0]!.job_id).toBeNull();
    // The webhook's job is stored, unmatched: it never counts for this scale set.
    const stored = await env.DB.prepare("SELECT scale_set_id, status FROM jobs WHERE id = ?").bind(p.workflow_job.id).first();
    expect(stored).toEqual({ scale_set_id: null, status: "in_progress" });
  });

  it("is not fed by webhooks: a delivery for its labels does not route to it", async () => {
    const w = await apiWorld();
    const route = await env.DB.prepare("SELECT enabled AND intake = 'webhook' AS routable FROM scale_sets WHERE id = ?")
      .bind(w.scaleSetId)
      .first<{ routable: number }>();
    expect(route?.routable).toBe(0);
  });
});
