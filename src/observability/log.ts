import { AsyncLocalStorage } from "node:async_hooks";

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
  /** Added by the logger itself while a request is being handled (see inRequestScope). */
  request_id?: string;
  [field: string]: unknown;
}

// The request a line is written for, carried through every await of its handling (and the
// work it leaves to waitUntil) without passing it down every call.
const requestScope = new AsyncLocalStorage<{ requestId: string }>();

/** Runs `fn` so that every line it logs, however deep, carries `request_id`. */
export function inRequestScope<T>(requestId: string, fn: () => T): T {
  return requestScope.run({ requestId }, fn);
}

/** The id of the request being handled, if any. */
export function currentRequestId(): string | undefined {
  return requestScope.getStore()?.requestId;
}

function line(fields: LogFields): string {
  const requestId = currentRequestId();
  return JSON.stringify(requestId === undefined || fields.request_id !== undefined ? fields : { ...fields, request_id: requestId });
}

export function logEvent(fields: LogFields): void {
  console.log(line(fields));
}

/** For failures nobody handles: console.error, so tail's level filter shows them too. */
export function logError(fields: LogFields & { error: string }): void {
  console.error(line(fields));
}

export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
