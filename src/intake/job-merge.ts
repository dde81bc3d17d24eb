import type { JobSource } from "../db/jobs/schema";
import { type JobEvent, statusRank } from "./job-event";

/**
 * How a job's row absorbs one more event, whatever order GitHub's deliveries arrive in.
 * These rules are the single definition: `mergeJob` applies them to plain data (and is
 * what the unit tests pin down), and db/jobs/delivery-store.ts compiles the same table into the
 * `ON CONFLICT DO UPDATE` clause, so D1 merges concurrently arriving events atomically.
 *
 * - `advance`: only moves up `statusRank`.
 * - `progress`: the value from the further-along event wins when it has one; an event
 *   that is not further along only fills a gap. A late `queued` therefore never erases a
 *   runner or a conclusion.
 * - `fill`: the first value stays; later events only fill a gap.
 * - `keep`: set when the row is created (the job's identity), never changed.
 *
 * "A gap" is null or the empty string. Applying an event twice changes nothing, and events
 * at different steps of the ladder give the same row in any order (where the furthest-along
 * event lacks a value, the others must agree on it, as GitHub's do). Two events at the same
 * step (the repository's and the organization's hook both reporting `completed`) carry the
 * same values from GitHub; if they ever differ, the first one's values stay.
 */
export type MergeRule = "advance" | "progress" | "fill" | "keep";

/**
 * The job row as the merge sees it: the event's fields, whose it is, and where it was routed.
 * (`source`, `entityId`, `id`) is the row's identity: an event only ever merges into the row of
 * the entity that signed it (docs/security.md).
 */
export interface JobState extends JobEvent {
  source: JobSource;
  entityId: string;
  scaleSetId: string | null;
  /** Why intake could not take the event as it came (a queue item that failed validation); none for a valid one. */
  problem?: string | null;
}

export const jobMergeRules = {
  source: "keep",
  entityId: "keep",
  id: "keep",
  runId: "keep",
  runAttempt: "keep",
  repository: "keep",
  owner: "keep",
  labels: "keep",
  status: "advance",
  conclusion: "progress",
  runnerName: "progress",
  runnerId: "progress",
  startedAt: "progress",
  completedAt: "progress",
  name: "progress",
  workflowName: "progress",
  queuedAt: "progress",
  // The first delivery's route stays: a job never moves between scale sets once routed. An
  // unmatched job is routed by a later delivery of its entity if a scale set matches by then.
  scaleSetId: "fill",
  // A valid later event does not erase it: the row still lost what that item carried.
  problem: "progress",
} as const satisfies Record<keyof JobState, MergeRule>;

const gap = (v: unknown) => v === null || v === undefined || v === "";

export function mergeJob(existing: JobState | null, incoming: JobState): JobState {
  if (!existing) return { ...incoming };
  const further = statusRank[incoming.status] > statusRank[existing.status];
  const out = { ...existing } as Record<keyof JobState, unknown>;
  for (const [field, rule] of Object.entries(jobMergeRules) as [keyof JobState, MergeRule][]) {
    const x = existing[field];
    const e = incoming[field];
    switch (rule) {
      case "advance":
        out[field] = further ? e : x;
        break;
      case "progress":
        out[field] = further ? (gap(e) ? x : e) : gap(x) ? e : x;
        break;
      case "fill":
        out[field] = gap(x) ? e : x;
        break;
      case "keep":
        break;
    }
  }
  return out as unknown as JobState;
}
