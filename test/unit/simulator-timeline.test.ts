import { describe, expect, it } from "vitest";
import { jitteredBootDelay, type MachineTimeline, TimelineHistory, timelineFilter } from "../../shims/simulator/timeline.ts";

const timeline = (i: number, over: Partial<MachineTimeline> = {}): MachineTimeline => ({
  tenant: "t1",
  pool_id: "p1",
  name: `m-${i}`,
  provider_id: `i-${i}`,
  boot_delay_ms: 0,
  flavor: null,
  image: null,
  shape: null,
  created_at: i,
  booted_at: null,
  configured_at: null,
  idle_at: null,
  deleted_at: i + 1,
  ...over,
});

describe("the simulator's machine timeline", () => {
  it("draws each boot delay uniformly in delay × (1 ± jitter)", () => {
    expect(jitteredBootDelay(20_000, 0.1, () => 0)).toBe(18_000);
    expect(jitteredBootDelay(20_000, 0.1, () => 0.5)).toBe(20_000);
    expect(jitteredBootDelay(20_000, 0.1, () => 0.999_999)).toBe(22_000);
    expect(jitteredBootDelay(20_000, 0, () => 0)).toBe(20_000);
    // A jitter past 1 would draw negative delays: held at 1.
    expect(jitteredBootDelay(100, 5, () => 0)).toBe(0);
  });

  it("keeps the last `max` deleted machines, oldest first, and filters by tenant, pool and since", () => {
    const h = new TimelineHistory(10);
    for (let i = 0; i < 25; i++) h.add(timeline(i, i % 2 ? { pool_id: "p2" } : {}));
    expect(h.list().map((t) => t.created_at)).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
    expect(h.list({ pool_id: "p2" }).map((t) => t.created_at)).toEqual([15, 17, 19, 21, 23]);
    expect(h.list({ since: 22 }).map((t) => t.created_at)).toEqual([22, 23, 24]);
    expect(h.list({ tenant: "t2" })).toEqual([]);
  });

  it("reads its filter from the query string and refuses a bad since", () => {
    expect(timelineFilter(new URLSearchParams("tenant=t1&pool=p1&since=1700000000000"))).toEqual({
      tenant: "t1",
      pool_id: "p1",
      since: 1_700_000_000_000,
    });
    expect(timelineFilter(new URLSearchParams(""))).toEqual({});
    expect(timelineFilter(new URLSearchParams("since=yesterday"))).toEqual({ error: expect.stringMatching(/milliseconds/) });
  });
});
