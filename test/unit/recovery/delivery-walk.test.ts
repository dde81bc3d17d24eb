import { describe, expect, it } from "vitest";
import {
  candidates,
  type ListedDelivery,
  listed,
  nextWalkState,
  reached,
  topBoundary,
  type WalkPolicy,
  type WalkState,
} from "../../../src/recovery/delivery-walk";

const NOW = Date.parse("2026-12-06T12:00:00Z");
const MIN = 60_000;
const POLICY: WalkPolicy = { overlapMs: MIN, maxAgeMs: 3 * 24 * 60 * MIN, firstLookBackMs: 24 * 60 * MIN };
const FRESH: WalkState = { seenThrough: null, walkCursor: null, walkUntil: null };

let nextId = 1;
const d = (minutesAgo: number, over: Partial<ListedDelivery> = {}): ListedDelivery => ({
  id: nextId++,
  guid: `g-${nextId}`,
  deliveredAt: NOW - minutesAgo * MIN,
  event: "workflow_job",
  action: "queued",
  statusCode: 0,
  installationId: null,
  redelivery: false,
  ...over,
});

describe("how far a walk goes", () => {
  it("a first walk looks back a day, never past the age limit", () => {
    expect(topBoundary(FRESH, NOW, POLICY)).toBe(NOW - 24 * 60 * MIN);
    expect(topBoundary(FRESH, NOW, { ...POLICY, maxAgeMs: 60 * MIN })).toBe(NOW - 60 * MIN);
  });

  it("later walks stop where the deliveries are examined and final", () => {
    expect(topBoundary({ ...FRESH, seenThrough: NOW - 10 * MIN }, NOW, POLICY)).toBe(NOW - 10 * MIN);
    // …but never past the age limit, however long the coordinator was away.
    expect(topBoundary({ ...FRESH, seenThrough: NOW - 10 * 24 * 60 * MIN }, NOW, POLICY)).toBe(NOW - POLICY.maxAgeMs);
  });

  it("a page reaches the boundary when an item on it is at or before it, or when it is the last", () => {
    const boundary = NOW - 5 * MIN;
    expect(reached([d(1), d(2)], boundary, true)).toBe(false);
    expect(reached([d(1), d(5)], boundary, true)).toBe(true);
    expect(reached([d(1)], boundary, false)).toBe(true);
    expect(reached([], boundary, false)).toBe(true);
  });
});

describe("the watch's state after a pass", () => {
  const boundary = NOW - 30 * MIN;
  const complete = (newest: number | null) => ({ top: { newest, complete: true, cursor: null }, gap: null });

  it("what a complete walk saw is final only up to the margin before now: GitHub may still list a delivery that late", () => {
    // The newest delivery is 10 s old: it, and anything listed late, are final only through a minute ago.
    expect(nextWalkState(FRESH, boundary, complete(NOW - 10_000), NOW, POLICY)).toEqual({
      seenThrough: NOW - MIN,
      walkCursor: null,
      walkUntil: null,
    });
    // A quiet hook: its newest delivery is older than the margin, so all it shows is final.
    expect(nextWalkState(FRESH, boundary, complete(NOW - 5 * MIN), NOW, POLICY).seenThrough).toBe(NOW - 5 * MIN);
    // No delivery at all: final through the margin.
    expect(nextWalkState(FRESH, boundary, complete(null), NOW, POLICY).seenThrough).toBe(NOW - MIN);
  });

  it("never moves back", () => {
    const before = { ...FRESH, seenThrough: NOW - 2 * MIN };
    expect(nextWalkState(before, before.seenThrough, complete(NOW - 3 * MIN), NOW, POLICY).seenThrough).toBe(NOW - 2 * MIN);
  });

  it("a walk cut short by the page cap leaves a gap to walk on from its cursor down to its boundary", () => {
    const after = nextWalkState(
      FRESH,
      boundary,
      { top: { newest: NOW - 5 * MIN, complete: false, cursor: "v1_50" }, gap: null },
      NOW,
      POLICY,
    );
    expect(after).toEqual({ seenThrough: NOW - 5 * MIN, walkCursor: "v1_50", walkUntil: boundary });
  });

  it("a gap walked to its end closes; one cut short again goes on from where it stopped", () => {
    const open = { seenThrough: NOW - 5 * MIN, walkCursor: "v1_50", walkUntil: boundary };
    const top = { newest: NOW - 5 * MIN, complete: true, cursor: null };
    expect(nextWalkState(open, open.seenThrough, { top, gap: { complete: true, cursor: null } }, NOW, POLICY)).toEqual({
      seenThrough: NOW - 5 * MIN,
      walkCursor: null,
      walkUntil: null,
    });
    expect(nextWalkState(open, open.seenThrough, { top, gap: { complete: false, cursor: "v1_20" } }, NOW, POLICY)).toEqual({
      seenThrough: NOW - 5 * MIN,
      walkCursor: "v1_20",
      walkUntil: boundary,
    });
  });

  it("a top walk cut short while a gap is open does not move seenThrough (no second gap)", () => {
    const open = { seenThrough: NOW - 20 * MIN, walkCursor: "v1_50", walkUntil: boundary };
    const after = nextWalkState(
      open,
      open.seenThrough,
      { top: { newest: NOW - 5 * MIN, complete: false, cursor: "v1_90" }, gap: { complete: false, cursor: "v1_40" } },
      NOW,
      POLICY,
    );
    expect(after).toEqual({ seenThrough: NOW - 20 * MIN, walkCursor: "v1_40", walkUntil: boundary });
  });
});

describe("which failures are candidates", () => {
  it("keeps failed workflow_job and installation events, one per GUID (the newest attempt), oldest first", () => {
    const first = d(10, { guid: "A", id: 1 });
    const retry = d(5, { guid: "A", id: 7, redelivery: true });
    const b = d(8, { guid: "B", id: 3, event: "installation", action: "created" });
    const ping = d(2, { guid: "C", id: 9, event: "ping", action: null });
    const ok = d(1, { guid: "D", id: 10, statusCode: 200 });
    const out = candidates([ok, ping, retry, b, first], NOW, POLICY);
    expect(out.map((c) => [c.guid, c.id, c.verdict])).toEqual([
      ["B", 3, "take"],
      ["A", 7, "take"],
    ]);
  });

  it("a delivery one of whose attempts succeeded (a redelivery) was made", () => {
    const failed = d(10, { guid: "A", id: 1, statusCode: 503 });
    const redelivered = d(9, { guid: "A", id: 2, statusCode: 200, redelivery: true });
    expect(candidates([redelivered, failed], NOW, POLICY)).toEqual([]);
  });

  it("an installation event a later one about the same installation made moot is superseded", () => {
    const created = d(10, { guid: "C", id: 1, event: "installation", action: "created", installationId: 7 });
    const deleted = d(5, { guid: "D", id: 2, event: "installation", action: "deleted", installationId: 7, statusCode: 200 });
    const other = d(8, { guid: "E", id: 3, event: "installation_repositories", action: "added", installationId: 8 });
    expect(candidates([deleted, other, created], NOW, POLICY).map((c) => [c.guid, c.verdict])).toEqual([
      ["C", "superseded"],
      ["E", "take"],
    ]);
  });

  it("marks deliveries past the age limit too old", () => {
    const out = candidates([d(4 * 24 * 60, { guid: "old" })], NOW, POLICY);
    expect(out[0]!.verdict).toBe("too_old");
  });

  it("reads GitHub's list item, and skips one without a usable time", () => {
    const item = {
      id: 12n as unknown as number,
      guid: "x",
      delivered_at: "2026-12-06T11:59:00Z",
      event: "workflow_job",
      action: "queued",
      status_code: 502,
      installation_id: 7,
      redelivery: false,
    };
    expect(listed(item)).toMatchObject({ id: 12, deliveredAt: NOW - MIN, statusCode: 502, installationId: 7 });
    expect(listed({ ...item, delivered_at: "not a time" })).toBeNull();
  });
});
