import {
  GithubApiError,
  GithubCredentialElsewhereError,
  GithubCredentialFailingError,
  GithubRateLimitedError,
  GithubUnavailableError,
} from "../../github/errors";
import { invocationBudget, invocationSpent } from "../../lib/invocation-cost";
import type { Probe, ProbeError } from "../facts";

/**
 * Subrequests one probe may take (its call, and the D1 reads and writes of the client that makes
 * it), held for it while it runs: probes run several at once, so what they spent is known late.
 */
const PROBE_SUBREQUESTS = 4;
/** Per request (its invocation's cost record): the subrequests held for probes under way. */
const reserved = new WeakMap<object, number>();

/**
 * Runs one call of the setup check and keeps its outcome as data: never throws, times itself,
 * and does not start once the report's deadline has passed (each call has a short timeout of
 * its own too, so a slow GitHub or shim costs a few seconds, never the report).
 */
export async function probe<T>(
  deadline: number,
  fn: () => Promise<T>,
  errorOf: (err: unknown) => ProbeError = githubProbeError,
): Promise<Probe<T>> {
  const started = Date.now();
  if (started > deadline) return { ok: false, error: { kind: "out_of_time" }, ms: 0 };
  // A call never starts where its request could not pay for it (the Free plan's 50 subrequests):
  // what the request spent, plus what the probes under way may still spend.
  const budget = invocationBudget().subrequests;
  const spent = invocationSpent();
  const held = spent ? (reserved.get(spent) ?? 0) : 0;
  if (spent && spent.subrequests + held + PROBE_SUBREQUESTS > budget) {
    return { ok: false, error: { kind: "out_of_subrequests", limit: budget }, ms: 0 };
  }
  if (spent) reserved.set(spent, held + PROBE_SUBREQUESTS);
  try {
    const value = await fn();
    return { ok: true, value, ms: Date.now() - started };
  } catch (err) {
    return { ok: false, error: errorOf(err), ms: Date.now() - started };
  } finally {
    if (spent) reserved.set(spent, Math.max(0, (reserved.get(spent) ?? 0) - PROBE_SUBREQUESTS));
  }
}

/** A GitHub client's failure as a probe's. */
export function githubProbeError(err: unknown): ProbeError {
  if (err instanceof GithubApiError) return { kind: "refused", status: err.status, message: err.githubMessage };
  // Failing credentials are never probed, so this one was refused (401) by the very call made.
  if (err instanceof GithubCredentialFailingError) return { kind: "refused", status: 401, message: err.reason };
  if (err instanceof GithubRateLimitedError) return { kind: "rate_limited", until: new Date(err.retryAt).toISOString() };
  if (err instanceof GithubUnavailableError)
    return { kind: "unreachable", message: err.message.replace(/^.*?GitHub unavailable/, "GitHub unavailable") };
  if (err instanceof GithubCredentialElsewhereError) return { kind: "not_sent", message: err.message };
  return { kind: "not_sent", message: err instanceof Error ? err.message : String(err) };
}

/** `p` or a rejection after `ms` (for calls with no timeout of their own: a Durable Object's RPC). */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
