/**
 * How the coordinator reads a shim's failures. The scale set object decides what to do with
 * each kind (retry with backoff, mark the instance in error, treat as gone); this file only
 * says which kind a failure is.
 */

import type { PortError, PortErrorKind, PortResult } from "../scaleset/ports";

// The kinds are the scale set's (its machine port): the shim client is that port's adapter.
export type ShimErrorKind = PortErrorKind;
export type ShimError = PortError;
export type ShimResult<T> = PortResult<T>;

/**
 * The kind of failure an HTTP status means, or null for success (2xx).
 * 404 is `not_found` (each operation decides whether that is success: it is for delete);
 * 409 is `duplicate`; 408 and 429 are the two 4xx that ask to be retried later, so they are
 * `retryable` like 5xx; every other status (other 4xx, 1xx, unfollowed 3xx) is `permanent`.
 */
export function classifyShimStatus(status: number): ShimErrorKind | null {
  if (status >= 200 && status < 300) return null;
  if (status === 404) return "not_found";
  if (status === 409) return "duplicate";
  if (status === 408 || status === 429) return "retryable";
  if (status >= 500 && status < 600) return "retryable";
  return "permanent";
}

/** Failures before any answer: a timeout, a refused or reset connection, a DNS failure. */
export function classifyTransportError(err: unknown, timeoutMs: number): ShimError {
  const name = err instanceof Error || (typeof err === "object" && err !== null && "name" in err) ? String((err as Error).name) : "";
  if (name === "TimeoutError" || name === "AbortError") {
    return { kind: "retryable", message: `no answer within ${timeoutMs} ms` };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { kind: "retryable", message: `connection failed: ${message || name || "unknown error"}` };
}
