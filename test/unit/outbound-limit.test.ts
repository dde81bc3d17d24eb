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

  it("counts a fetchFirst call (the listener's long poll) among the slots, and lets it jump the queue, never wait for it", async () => {
    const { calls, fetchFn } = heldFetch();
    const lim = outboundLimiter(6, fetchFn);
    // A long poll pending: it holds one of the six, as the platform counts it; five creates go at once.
    const poll = lim.fetchFirst("https://x.test/poll");
    const creates = Array.from({ length: 8 }, (_, i) => lim.fetch(`https://x.test/create/${i}`));
    await tick();
    expect(calls.map((c) => c.url)).toEqual(["https://x.test/poll", ...[0, 1, 2, 3, 4].map((i) => `https://x.test/create/${i}`)]);
    expect([lim.active(), lim.activeFirst(), lim.queued(), lim.maxActiveInOrder()]).toEqual([6, 1, 3, 5]);
    // The creates proceed while the poll waits: each that has its headers frees its slot for the next.
    calls[1]!.answer();
    await creates[0];
    await tick();
    expect(calls.at(-1)!.url).toBe("https://x.test/create/5");
    // The poll's headers arrive (an empty poll after ~50 s): its slot goes to the queue, and the next poll
    // is sent ahead of the creates still queued, as soon as one slot frees.
    calls[0]!.answer(202);
    await poll;
    await tick();
    expect(calls.at(-1)!.url).toBe("https://x.test/create/6");
    const next = lim.fetchFirst("https://x.test/poll");
    await tick();
    expect([lim.queued(), calls.at(-1)!.url]).toEqual([2, "https://x.test/create/6"]);
    calls[2]!.answer();
    await tick();
    expect(calls.at(-1)!.url).toBe("https://x.test/poll");
    // Answer everything as it is sent, until the queue is empty.
    while (lim.active() > 0) {
      for (const c of calls) c.answer();
      await tick();
    }
    await Promise.all([...creates, next]);
    expect([lim.queued(), lim.activeFirst(), lim.maxActiveInOrder()]).toEqual([0, 0, 6]);
  });

  it("refuses a limit that is not a positive integer", () => {
    expect(() => outboundLimiter(0)).toThrow(/positive integer/);
    expect(() => outboundLimiter(2.5)).toThrow(/positive integer/);
  });
});
