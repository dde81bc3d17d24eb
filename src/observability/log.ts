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

export type LogLevel = "debug" | "info" | "warn" | "error";
const SEVERITY: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
export const LOG_LEVELS = Object.keys(SEVERITY) as LogLevel[];

/**
 * The least severe level written: `LOG_LEVEL` (a Worker var, which nodejs_compat puts in
 * process.env; the environment in Node), `info` when unset or not a level. Read at every line
 * so a test or a script can change it without reloading anything.
 */
export function logThreshold(): LogLevel {
  const wanted = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.LOG_LEVEL?.trim().toLowerCase();
  return wanted !== undefined && Object.hasOwn(SEVERITY, wanted) ? (wanted as LogLevel) : "info";
}

// The one sink. The console method carries the level: Workers Logs and `wrangler tail`
// filter on it, so failures keep arriving as console.error whatever the fields say.
function write(level: LogLevel, text: string): void {
  if (level === "error") console.error(text);
  else if (level === "warn") console.warn(text);
  else if (level === "debug") console.debug(text);
  else console.log(text);
}

function emit(level: LogLevel, fields: LogFields): void {
  if (SEVERITY[level] < SEVERITY[logThreshold()]) return;
  write(level, line(fields));
}

/** One event per call, at the level named; lines below LOG_LEVEL are dropped. */
export const logger = {
  /** Detail useful while chasing a problem, too much for every day. */
  debug: (fields: LogFields): void => emit("debug", fields),
  /** What happened: the default level, and what logEvent writes. */
  info: (fields: LogFields): void => emit("info", fields),
  /** Something went wrong that the code handled (a retry, a fallback). */
  warn: (fields: LogFields): void => emit("warn", fields),
  /** A failure nobody handles. */
  error: (fields: LogFields & { error: string }): void => emit("error", fields),
};

/** An event at a level chosen by the caller (a pure rule such as scaleset/log-levels.ts); an error needs its `error`. */
export function logAt(level: Exclude<LogLevel, "error">, fields: LogFields): void {
  emit(level, fields);
}

/** An event at info level. */
export function logEvent(fields: LogFields): void {
  logger.info(fields);
}

/** For failures nobody handles: error level (console.error), so tail's level filter shows them too. */
export function logError(fields: LogFields & { error: string }): void {
  logger.error(fields);
}

export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
