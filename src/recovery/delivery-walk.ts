/**
 * How far to look through a hook's deliveries, and which failed ones to take in: plain functions
 * over what GitHub listed (newest first, every delivery: GitHub's failure filter leaves out those
 * that got no answer) and what the watch remembers. The adapter (hook-walk.ts) fetches the pages;
 * nothing here calls anything.
 *
 * A watch remembers how far its deliveries are examined and final (`seenThrough`): every delivery
 * GitHub shows at or before that time has been looked at, and no other can still appear there.
 * GitHub lists a delivery once its attempt is over, up to 10 s (30 s on GHES) after the time it
 * shows, so a walk at time W that saw deliveries up to N makes them final only through
 * min(N, W − margin). The next walk goes from the top down to that point, which in a quiet hour is
 * the first page. What the margin shows twice is recognized by its GUID. A walk the page cap cuts
 * short leaves a gap, walked on from its cursor in later passes; while a gap is open, a top walk cut
 * short again does not move `seenThrough` (it walks the same top again rather than leave a second gap).
 */

/** The events recovery takes in; anything else a hook sends changes nothing here. */
export const RECOVERED_EVENTS = new Set(["workflow_job", "installation", "installation_repositories"]);

export interface ListedDelivery {
  /** GitHub's id of this attempt (what the payload is fetched by). */
  id: number;
  guid: string;
  deliveredAt: number;
  event: string;
  action: string | null;
  statusCode: number;
  installationId: number | null;
  redelivery: boolean;
}

export interface WalkState {
  seenThrough: number | null;
  walkCursor: string | null;
  walkUntil: number | null;
}

export interface WalkPolicy {
  /** How long after its time GitHub may still list a delivery (its attempt's timeout, with room). */
  overlapMs: number;
  /** Older than this is never taken in: GitHub's retention, or ours of delivery ids, whichever is shorter. */
  maxAgeMs: number;
  /** A watch's first walk goes back this far (at most maxAgeMs). */
  firstLookBackMs: number;
}

/** Where a top walk stops: deliveries at or before this time are examined and final. */
export function topBoundary(state: WalkState, now: number, policy: WalkPolicy): number {
  const oldest = now - policy.maxAgeMs;
  const from = state.seenThrough === null ? now - Math.min(policy.firstLookBackMs, policy.maxAgeMs) : state.seenThrough;
  return Math.max(oldest, from);
}

/** Whether a walk that just read `page` has reached `boundary` (an item at or before it, or the list ended). */
export function reached(page: readonly ListedDelivery[], boundary: number, hasNext: boolean): boolean {
  if (!hasNext) return true;
  return page.some((d) => d.deliveredAt <= boundary);
}

/** What the walks of one pass saw, for the next state. */
export interface WalkResult {
  /** The top walk: the newest item it saw, whether it reached its boundary, and where it stopped if not. */
  top: { newest: number | null; complete: boolean; cursor: string | null };
  /** The gap walk, if one was open: whether it closed, and where it stopped if not. */
  gap: { complete: boolean; cursor: string | null } | null;
}

/** The watch's state after a pass walked at `now`. */
export function nextWalkState(
  before: WalkState,
  boundary: number,
  result: WalkResult,
  now: number,
  policy: Pick<WalkPolicy, "overlapMs">,
): WalkState {
  const gapOpen = before.walkCursor !== null && !(result.gap?.complete ?? false);
  const gap: Pick<WalkState, "walkCursor" | "walkUntil"> = gapOpen
    ? { walkCursor: result.gap?.cursor ?? before.walkCursor, walkUntil: before.walkUntil }
    : { walkCursor: null, walkUntil: null };
  // What the top walk examined is final up to the margin before now (no delivery at all: up to it too).
  const final = Math.min(result.top.newest ?? Number.POSITIVE_INFINITY, now - policy.overlapMs);
  const through = Math.max(before.seenThrough ?? Number.NEGATIVE_INFINITY, boundary, final);
  if (result.top.complete) return { seenThrough: through, ...gap };
  // Cut short: with no gap open, what lies below becomes the gap; with one open, walk the same top again next time.
  if (!gapOpen && result.top.cursor) return { seenThrough: through, walkCursor: result.top.cursor, walkUntil: boundary };
  return { seenThrough: before.seenThrough, ...gap };
}

export interface Candidate extends ListedDelivery {
  /** `too_old`, `superseded`: seen and recorded, never taken in. */
  verdict: "take" | "too_old" | "superseded";
}

const INSTALLATION_EVENTS = new Set(["installation", "installation_repositories"]);

/**
 * The failed deliveries worth looking at among those listed: anything but a 2xx answer (GitHub's
 * status "OK"), of events recovery handles, one per GUID (a redelivery is another attempt of the
 * same delivery: if any attempt succeeded, the delivery was made; else the newest stands for it),
 * within the age limit (older ones are marked so), oldest first so events reach intake in the
 * order GitHub sent them. An installation event is taken in only when no later one about the same
 * installation was listed (an old `created` taken in after a `deleted` would bring the installation
 * back); a job's events need no such care, intake's merge never moves a job backwards.
 */
export function candidates(listed: readonly ListedDelivery[], now: number, policy: WalkPolicy): Candidate[] {
  const ok = (d: ListedDelivery) => d.statusCode >= 200 && d.statusCode < 300;
  const made = new Set(listed.filter(ok).map((d) => d.guid));
  const byGuid = new Map<string, ListedDelivery>();
  for (const d of listed) {
    if (!RECOVERED_EVENTS.has(d.event) || ok(d) || made.has(d.guid)) continue;
    const seen = byGuid.get(d.guid);
    if (!seen || d.id > seen.id) byGuid.set(d.guid, d);
  }
  const latestAbout = new Map<number, number>();
  for (const d of listed) {
    if (!INSTALLATION_EVENTS.has(d.event) || d.installationId === null) continue;
    latestAbout.set(d.installationId, Math.max(latestAbout.get(d.installationId) ?? 0, d.id));
  }
  const superseded = (d: ListedDelivery) =>
    INSTALLATION_EVENTS.has(d.event) && d.installationId !== null && (latestAbout.get(d.installationId) ?? 0) > d.id;
  return [...byGuid.values()]
    .map(
      (d): Candidate => ({
        ...d,
        verdict: now - d.deliveredAt > policy.maxAgeMs ? "too_old" : superseded(d) ? "superseded" : "take",
      }),
    )
    .sort((a, b) => a.deliveredAt - b.deliveredAt || a.id - b.id);
}

/** GitHub's list item as the walk sees it (times in unix ms). */
export function listed(item: {
  id: number | bigint;
  guid: string;
  delivered_at: string;
  event: string;
  action: string | null;
  status_code: number;
  installation_id: number | bigint | null;
  redelivery: boolean;
}): ListedDelivery | null {
  const at = Date.parse(item.delivered_at);
  if (!Number.isFinite(at) || !item.guid) return null;
  return {
    id: Number(item.id),
    guid: item.guid,
    deliveredAt: at,
    event: item.event,
    action: item.action,
    statusCode: item.status_code,
    installationId: item.installation_id === null ? null : Number(item.installation_id),
    redelivery: item.redelivery,
  };
}
