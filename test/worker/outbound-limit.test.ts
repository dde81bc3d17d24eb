import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { loadScaleSetSnapshot } from "../../src/db/scaleset/snapshot-store";
import { outboundLimiter } from "../../src/lib/outbound-limit";
import { openScaleSetPorts } from "../../src/scaleset/ports-factory";
import { scaleSetWorld } from "./scaleset-world";

describe("a scale set's outbound connection limit", () => {
  it("sends every GitHub and shim call of the scale set's ports through the object's limiter", async () => {
    const w = await scaleSetWorld("outbound-limit-secret-01");
    const { scaleSet } = await loadScaleSetSnapshot(env.DB, w.scaleSetId);
    const seen: string[] = [];
    const limiter = outboundLimiter(1, (input, init) => {
      seen.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
      return fetch(input, init);
    });
    const { machines, runners } = await openScaleSetPorts(env, scaleSet!, { outbound: limiter.fetch });
    const [jit, listed] = await Promise.all([
      runners.createJitRunner({ name: "er-limited", labels: ["self-hosted"], runnerGroup: "Default" }),
      machines.listInstances(),
    ]);
    expect(jit.runnerId).toEqual(expect.any(Number));
    expect(listed.ok).toBe(true);
    expect(seen.some((p) => p.endsWith("/actions/runners/generate-jitconfig"))).toBe(true);
    expect(seen.some((p) => p.endsWith("/v1/instances"))).toBe(true);
    // One slot: the second call queued behind the first.
    expect(limiter.maxQueued()).toBe(1);
  });
});
