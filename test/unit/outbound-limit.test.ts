import { describe, expect, it } from "vitest";
import { outboundLimiter } from "../../src/lib/outbound-limit";

/** A fetch whose calls answer (headers) only when the test says so. */
function heldFetch() {
  const calls: { url: string; answer: (status?: number) => void; fail: (err: Error) => void }[] = [];
  const fetchFn = ((input: RequestInfo | URL) =>
    new Promise<Response>((resolve, reject) => {
      calls.push({ url: String(input), answer: (status = 200) => resolve(new Response("body", { status })), fail: reject });
    })) as typeof fetch;
  return { calls, fetchFn };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("outboundLimiter", () => {
  it("lets `limit` calls wait for headers at once; the next starts when one has its headers, in order", async () => {
    const { calls, fetchFn } = heldFetch();
    const lim = outboundLimiter(6, fetchFn);
    const results = Array.from({ length: 8 }, (_, i) => lim.fetch(`https://x.test/${i}`));
    await tick();
    expect(calls.map((c) => c.url)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `https://x.test/${i}`));
    expect([lim.active(), lim.queued(), lim.maxQueued()]).toEqual([6, 2, 2]);
    calls[2]!.answer();
    // Headers are in: the slot is free before anyone reads the body.
    const third = await results[2]!;
    await tick();
    expect(calls.map((c) => c.url).slice(6)).toEqual(["https://x.test/6"]);
    expect(await third.text()).toBe("body");
    calls[0]!.fail(new Error("connection reset"));
    await expect(results[0]).rejects.toThrow("connection reset");
    await tick();
    expect(calls.at(-1)!.url).toBe("https://x.test/7");
    expect([lim.active(), lim.queued()]).toEqual([6, 0]);
    for (const c of calls) c.answer();
    await Promise.allSettled(results);
    expect(lim.active()).toBe(0);
  });

  it("drops a queued call whose signal aborts, rejecting with its reason, and never sends it", async () => {
    const { calls, fetchFn } = heldFetch();
    const lim = outboundLimiter(1, fetchFn);
    const first = lim.fetch("https://x.test/a");
    const ctl = new AbortController();
    const second = lim.fetch("https://x.test/b", { signal: ctl.signal });
    const third = lim.fetch("https://x.test/c");
    await tick();
    ctl.abort(new Error("timed out while queued"));
    await expect(second).rejects.toThrow("timed out while queued");
    expect(lim.queued()).toBe(1);
    calls[0]!.answer();
    await first;
    await tick();
    expect(calls.map((c) => c.url)).toEqual(["https://x.test/a", "https://x.test/c"]);
    calls[1]!.answer();
    await third;
    // An already aborted signal never takes a slot.
    await expect(lim.fetch("https://x.test/d", { signal: AbortSignal.abort(new Error("gone")) })).rejects.toThrow("gone");
    expect(lim.active()).toBe(0);
  });

  it("refuses a limit that is not a positive integer", () => {
    expect(() => outboundLimiter(0)).toThrow(/positive integer/);
    expect(() => outboundLimiter(2.5)).toThrow(/positive integer/);
  });
});
