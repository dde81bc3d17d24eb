// A create is a failure for the backoff and the hard limit however its failure arrives: an
// error answer, a machine reported in status `error` (at once, in a callback or by a poll), or
// a failed callback.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { deliverOutbox } from "../fake-shim/control";
import type { FaultAction } from "../fake-shim/types";
import { api, inScaleSetObject } from "./helpers";
import { queueJobs, reconcile, scaleSetWorld } from "./scaleset-world";

const SHIM_SECRET = "create-verdicts-shim-secret-01";

async function live(scaleSetId: string) {
  return (
    await env.DB.prepare("SELECT * FROM instances WHERE scale_set_id = ? AND status != 'deleted'")
      .bind(scaleSetId)
      .all<Record<string, any>>()
  ).results;
}

/** A scale set whose shim answers creates 202 and keeps the callbacks for the test to deliver. */
async function asyncWorld(action: Extract<FaultAction, { type: "async" }>, times: number) {
  const w = await scaleSetWorld(SHIM_SECRET);
  const provider = (await api.get("/api/v1/providers")).body.find((p: any) => p.url === w.shim.url);
  await w.shim.configure({ callbackUrl: `https://edgerunner.test/api/v1/providers/${provider.name}/callbacks` });
  await w.shim.addRule({ operation: "create", times, action: { ...action, callback: "outbox" } });
  return w;
}

/** Delivers `n` callbacks as they become ready. */
async function deliver(w: Awaited<ReturnType<typeof asyncWorld>>, n: number) {
  const answers: unknown[] = [];
  for (let i = 0; i < 100 && answers.length < n; i++) {
    await new Promise((r) => setTimeout(r, 20));
    for (const d of await deliverOutbox(w.shim, (r) => exports.default.fetch(r))) answers.push(d.body);
  }
  return answers;
}

describe("create verdicts", () => {
  it("counts machines the provider reports in status error as failed creates, up to the hard limit", async () => {
    const w = await asyncWorld({ type: "async", complete_after_ms: 1, status: "error" }, 5);
    await queueJobs(w.scaleSetId, 5);
    let status = await reconcile(w.scaleSetId);
    // Accepted is no verdict yet.
    expect(status.create_backoff.failures).toBe(0);
    expect(await deliver(w, 5)).toEqual(Array(5).fill({ accepted: true }));
    status = await reconcile(w.scaleSetId);
    expect(status.create_backoff).toMatchObject({ failures: 5, hard_limited_at: expect.any(String), create_allowed_at: null });
    expect(status.last_reconcile.summary.blocked).toBe("hard_limit");
    // The error machines go; no new ones replace them.
    expect((await live(w.scaleSetId)).filter((r) => r.status !== "pending_delete" && r.status !== "deleting")).toHaveLength(0);
  });

  it("counts a machine the shim answers in status error at once as a failed create", async () => {
    const w = await scaleSetWorld(SHIM_SECRET);
    await w.shim.addRule({ operation: "create", times: 5, action: { type: "machine_status", status: "error" } });
    await queueJobs(w.scaleSetId, 5);
    const status = await reconcile(w.scaleSetId);
    expect(status.create_backoff).toMatchObject({ failures: 5, hard_limited_at: expect.any(String) });
    expect((await w.shim.machines()).every((m) => m.status === "error")).toBe(true);
  });

  it("ties a hard limit reached through failed callbacks to the scale set version, so an update lifts it", async () => {
    const w = await asyncWorld({ type: "async", complete_after_ms: 1, fail: { message: "quota exceeded", retryable: false } }, 5);
    await queueJobs(w.scaleSetId, 5);
    await reconcile(w.scaleSetId);
    expect(await deliver(w, 5)).toEqual(Array(5).fill({ accepted: true }));
    let status = await reconcile(w.scaleSetId);
    expect(status.create_backoff.hard_limited_at).toEqual(expect.any(String));

    await new Promise((r) => setTimeout(r, 5));
    expect((await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { flavor: "medium" })).status).toBe(200);
    status = await reconcile(w.scaleSetId);
    expect(status.create_backoff.hard_limited_at).toBeNull();
  });

  it("counts a machine in status error found by a poll as a failed create", async () => {
    const w = await asyncWorld({ type: "async", complete_after_ms: 1, status: "error", callback_delay_ms: 60_000 }, 1);
    await queueJobs(w.scaleSetId, 1);
    await reconcile(w.scaleSetId);
    const [row] = await live(w.scaleSetId);
    await new Promise((r) => setTimeout(r, 20));
    await inScaleSetObject(w.scaleSetId, (obj) => obj.state.updateOps(row!.name, { pollAt: 1 }));
    const status = await reconcile(w.scaleSetId);
    expect(status.create_backoff.failures).toBe(1);
  });
});
