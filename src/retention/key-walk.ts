/**
 * Retention's walk through a table by its key, for a table with no index on age (webhook_deliveries,
 * migration 0032). Pure.
 *
 * Three rows a job were spent keeping an index on `received_at` only so retention could find the
 * oldest delivery ids; a delivery id is random, so its key says nothing of its age. Instead each
 * batch reads the next window of keys after a cursor (at most `scan` rows, in key order), deletes
 * those in it that are past the cutoff (a batch at most), and moves the cursor to the window's end; the cursor is
 * kept in D1 between runs. A lap over the whole table starts at most once a day, so every row is
 * read about once a day and goes within a day of its cutoff: rows read are a thousand times
 * cheaper than rows written, and a late delete is harmless (intake refuses a replay by its age, not
 * by this table).
 */

const DAY_MS = 86_400_000;

/** How often a new lap may start: each row is read once a lap. */
export const WALK_LAP_MS = DAY_MS;

/**
 * Keys one batch reads: twenty DELETE batches' worth, so a lap over 14 days of 100,000 jobs a day
 * (4.2 million delivery ids) fits in the day's hourly runs at the default query cap.
 */
export const walkScanRows = (batchSize: number): number => batchSize * 20;

/** Where the walk stands, as kept in D1: `position` '' between laps. */
export interface WalkCursor {
  position: string;
  /** When the lap under way (or the last one) started, unix ms; 0 before the first. */
  lapStartedAt: number;
}

/** What the batch's read found after the cursor: how many keys (at most `scan`) and the last of them. */
export interface WalkWindow {
  scanned: number;
  last: string | null;
  /**
   * The key of the batch's last eligible row when the window holds more than a batch of them
   * (null: it holds no more than a batch): the window ends there, so one DELETE removes at most a
   * batch (RETENTION_BATCH_SIZE).
   */
  cut: string | null;
}

export type WalkStep =
  /** No lap under way and the last one started less than WALK_LAP_MS ago: nothing to do this run. */
  | { kind: "rest" }
  | {
      kind: "walk";
      /** The window is the keys after `from` up to `to` inclusive; `to` null: no key after `from`. */
      from: string;
      to: string | null;
      /** The cursor to keep. */
      next: WalkCursor;
      /** The window reached the table's end: the lap is over, this table is done for the run. */
      lapEnded: boolean;
    };

/** True when a batch should walk: a lap is under way, or the last one started a lap's time ago. */
export function walkDue(cursor: WalkCursor, now: number): boolean {
  return cursor.position !== "" || now - cursor.lapStartedAt >= WALK_LAP_MS;
}

/** The latest lap start a new lap may follow (bound in the read, so a resting walk reads no keys). */
export const lapStartBefore = (now: number): number => now - WALK_LAP_MS;

/** One batch of the walk, from the cursor and the window its read found. */
export function walkStep(cursor: WalkCursor, window: WalkWindow, scan: number, now: number): WalkStep {
  if (!walkDue(cursor, now)) return { kind: "rest" };
  const to = window.cut ?? window.last;
  const lapEnded = window.cut === null && (window.scanned < scan || window.last === null);
  return {
    kind: "walk",
    from: cursor.position,
    to,
    next: { position: lapEnded ? "" : to!, lapStartedAt: cursor.position === "" ? now : cursor.lapStartedAt },
    lapEnded,
  };
}
