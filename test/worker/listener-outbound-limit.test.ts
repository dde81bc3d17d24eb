/**
 * The scale set API listener's long poll and the object's six outbound connections: the poll
 * waits up to ~50 s for its headers and the platform counts it among the six, so it holds one,
 * never more, and never waits behind a burst's creates; the creates go five at a time beside it.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { scaleSetObject } from "../../src/scaleset/stub";
import { api, inScaleSetObject, unique } from "./helpers";
import { reconcile, scaleSetWorld } from "./scaleset-world";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the listener's long poll under the object's connection limit", () => {
  it("holds one of six slots while it waits; six creates still all proceed beside it, five at a time, without waiting for it", async () => {
    const name = unique("ss").toLowerCase();
    const w = await scaleSetWorld("listener-limit-secret-01", { name, intake: "scaleset_api", min_idle_runners: 0 });
    await w.github.actionsSettings({ poll_wait_ms: 50 });
    const listen = () => scaleSetObject(env, w.scaleSetId).listenNow(w.scaleSetId);
    for (let i = 0; i < 4 && !(await listen()).listener?.session_open; i++);

    // Production's limit, and a poll that waits as the service's does when the queue is empty.
    await inScaleSetObject(w.scaleSetId, (obj) => obj.limitOutbound(6));
    await w.github.actionsSettings({ poll_wait_ms: 60_000 });
    await w.shim.setFaults({ latency_ms: { create: 200 } });
    const polling = listen();
    const pollPending = () => inScaleSetObject(w.scaleSetId, (obj) => obj.limiter.activeFirst() as number);
    for (let i = 0; i < 500 && (await pollPending()) === 0; i++) await sleep(10);
    expect(await pollPending()).toBe(1);

    // Six idle runners wanted: six JIT configs from the scale set, six creates at the shim.
    expect((await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { min_idle_runners: 6 })).status).toBe(200);
    const status = await reconcile(w.scaleSetId);
    expect(status.last_reconcile.error).toBeNull();
    const running = await env.DB.prepare("SELECT count(*) AS n FROM instances WHERE scale_set_id = ? AND status = 'running'")
      .bind(w.scaleSetId)
      .first<{ n: number }>();
    expect(running!.n).toBe(6);
    const seen = await inScaleSetObject(w.scaleSetId, (obj) => ({
      pollStillPending: obj.limiter.activeFirst(),
      mostCallsAtOnce: obj.limiter.maxActiveInOrder(),
    }));
    // All six are up while the poll still waits: they never queued behind it. At most five waited at
    // once: the poll held the sixth slot, as the platform would count it.
    expect(seen).toEqual({ pollStillPending: 1, mostCallsAtOnce: 5 });

    // A job ends the poll: the message is taken, and the limiter is free again.
    await w.github.queueJobs({ repository: "octo/app", labels: [name] });
    await polling;
    expect(await pollPending()).toBe(0);
  });
});
