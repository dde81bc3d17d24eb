import { currentRequestId } from "./request-context";

/**
 * One JSON object per line, the shape `wrangler tail --format json` and jq recipes rely on.
 * Field names are fixed here so every event can be filtered the same way; anything else an
 * event carries goes alongside them. Never pass a secret or token: callers log ids and names.
 */
export interface LogFields {
  event: string;
  scale_set?: string | null;
  instance?: string | null;
  job_id?: number | null;
  delivery_id?: string | null;
  provider?: string | null;
  duration_ms?: number;
  /** Present only when something failed: `select(.error)` finds every failure. */
  error?: string;
  [field: string]: unknown;
}

/** Lines written while handling a request carry its id, the one its error bodies quote. */
function line(fields: LogFields): string {
  const requestId = currentRequestId();
  return JSON.stringify(requestId && fields.request_id === undefined ? { ...fields, request_id: requestId } : fields);
}

export function logEvent(fields: LogFields): void {
  console.log(line(fields));
}

/** For failures nobody handles: console.error, so tail's level filter shows them too. */
export function logError(fields: LogFields & { error: string }): void {
  console.error(line(fields));
}

export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
