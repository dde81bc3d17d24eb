import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, inScaleSetObject } from "./helpers";
import { queueJobs, reconcile, scaleSetWorld } from "./scaleset-world";

describe("ScaleSet object: what an invocation spends", () => {
  it("counts every outbound call and D1 call of a reconcile run as subrequests, in its status and per invocation", async () => {
    // The object mints the JIT configs, so its run carries GitHub calls to count.
    const w = await scaleSetWorld("invocation-cost-secret-01", { jit_config_timing: "before_create" });
    // Settle the first run (credential reads, drift check), then count a run that creates three runners.
    await reconcile(w.scaleSetId);
    await w.github.clearRequests();
    const shimBefore = (await w.shim.requests()).length;
    await queueJobs(w.scaleSetId, 3);
    const status = await reconcile(w.scaleSetId);
    const last = status.last_reconcile;
    expect(last.actions).toEqual({ create: 3 });

    const githubCalls = (await w.github.requests()).length;
    const shimCalls = (await w.shim.requests()).length - shimBefore;
    // Three JIT configs at GitHub; at the shim the creates (one each, or a batch) and its capabilities when not yet known.
    expect(githubCalls).toBeGreaterThanOrEqual(3);
    expect(shimCalls).toBeGreaterThanOrEqual(1);
    expect(last.fetches).toBe(githubCalls + shimCalls);
    // Subrequests are the fetches and every D1 call, the pass's own round trips included.
    expect(last.subrequests).toBeGreaterThanOrEqual(last.fetches + last.d1RoundTrips);

    // The invocation (the reconcile RPC) holds at least the run, and the status reports it.
    const detail = (await api.get(`/api/v1/scalesets/${w.scaleSetId}`)).body;
    const inv = detail.status.invocations;
    expect(inv.budget).toEqual({ subrequests: 10_000, d1_queries: 1_000 });
    expect(inv.largest.subrequests).toBeGreaterThanOrEqual(last.subrequests);
    expect(inv.largest.fetches).toBe(last.fetches);
    expect(inv.largest.d1_queries).toBeGreaterThanOrEqual(last.d1Queries);
    expect(inv.count).toBeGreaterThanOrEqual(2);
  });

  it("writes a new runner's row and its creating mark in one D1 round trip when the pass mints no JIT config", async () => {
    // JIT on boot (the default): nothing outbound comes between the new rows and their creates.
    const onBoot = await scaleSetWorld("invocation-cost-secret-03");
    const minting = await scaleSetWorld("invocation-cost-secret-04", { jit_config_timing: "before_create" });
    const createPass = async (scaleSetId: string) => {
      await reconcile(scaleSetId);
      await queueJobs(scaleSetId, 3);
      const last = (await reconcile(scaleSetId)).last_reconcile;
      expect(last.actions).toEqual({ create: 3 });
      return last.d1RoundTrips as number;
    };
    // Minting in the pass, the rows are written before the JIT calls (and the budget's reservation)
    // and marked creating after them: two round trips more.
    const [withoutJit, withJit] = [await createPass(onBoot.scaleSetId), await createPass(minting.scaleSetId)];
    expect({ withoutJit, withJit }).toEqual({ withoutJit: 4, withJit: 6 });
    // Both steps are still recorded, in order.
    const rows = (await api.get(`/api/v1/scalesets/${onBoot.scaleSetId}/instances`)).body as { name: string }[];
    expect(rows).toHaveLength(3);
    const detail = (await api.get(`/api/v1/instances/${rows[0]!.name}`)).body as { transitions: { field: string; to: string }[] };
    const steps = detail.transitions
      .filter((t) => t.field === "status")
      .map((t) => t.to)
      .reverse();
    expect(steps.slice(0, 3)).toEqual(["pending_create", "creating", "running"]);
  });

  it("counts D1 calls made straight on the object's env, not only the pass's own", async () => {
    const w = await scaleSetWorld("invocation-cost-secret-02");
    await reconcile(w.scaleSetId);
    const before = await inScaleSetObject(w.scaleSetId, (obj) => obj.invocations.status().count);
    // A runner report is an RPC of its own: one D1 round trip, the read of the instance with the
    // writes decided in advance (runner-report-store.ts), which change nothing for an unknown one.
    const stub = env.SCALE_SET.get(env.SCALE_SET.idFromName(w.scaleSetId));
    expect(await stub.runnerReport(w.scaleSetId, "er-nosuch", 1, { status: "idle", message: "up" } as never)).toEqual({
      error: "unauthorized",
      reason: "no such instance",
    });
    const after = await inScaleSetObject(w.scaleSetId, (obj) => obj.invocations.status());
    expect(after.count).toBe(before + 1);
    expect(after.last).toEqual({ method: "runnerReport", subrequests: 1, fetches: 0, d1_round_trips: 1, d1_queries: 3 });
  });
});
