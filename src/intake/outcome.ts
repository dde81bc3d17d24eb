import type { z } from "zod";
import type { EntityKind } from "../db/directory/schema";
import type { JobStatus } from "../db/jobs/schema";

/**
 * What became of a delivery, whichever way it came in: through a webhook (receive-delivery.ts),
 * or fetched back from GitHub by delivery recovery (recovered-delivery.ts).
 */

/** Why a delivery was turned away: the `webhook.rejected.<reason>` counter and the log line's `reason`. */
export type Rejection =
  | "missing_headers"
  | "invalid_headers"
  | "payload_too_large"
  | "malformed_json"
  | "unknown_entity"
  | "bad_signature"
  | "invalid_payload"
  | "out_of_bounds"
  /** Signed, but about a job GitHub created before the retention window, which has no row here: a replay. */
  | "job_too_old";

/**
 * What became of a delivery. `problems`: why a workflow_job payload did not parse (the HTTP
 * handler lists them); `nudge`: the scale sets whose objects should reconcile now.
 */
export type IntakeOutcome =
  | { kind: "rejected"; reason: Rejection; details?: unknown; problems?: z.ZodError }
  | { kind: "ignored"; reason: string }
  | { kind: "pong"; entity: { id: string; kind: EntityKind } | null; credentials: { id: string; appId: number } | null }
  | { kind: "duplicate"; jobId: number }
  | { kind: "installation"; appId: number; installationId: number; status: string }
  | { kind: "accepted"; jobId: number; status: JobStatus; scaleSetId: string | null; nudge: string[]; entityId: string };
