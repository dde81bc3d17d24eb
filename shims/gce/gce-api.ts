import type { ServiceAccount } from "./config.ts";
import { accessToken, forgetToken } from "./token.ts";

/**
 * Compute Engine's v1 REST API over fetch, with the service account's access token. Never
 * throws: an answer is the parsed JSON or a GceError read from Google's error shape
 * {error:{code, message, errors:[{reason, domain, message}]}}. A 401 drops the cached token and
 * tries once more with a fresh one; nothing else is retried here (the coordinator retries).
 */

export interface GceError {
  /** The first error reason (notFound, rateLimitExceeded, …), an operation's error code, or NetworkError/MalformedResponse/token errors. */
  reason: string;
  message: string;
  /** HTTP status; 0 when no answer came. */
  status: number;
  /** Which call: a discovery method id (compute.instances.insert, …) or oauth2.token. */
  method: string;
}

// biome-ignore lint/suspicious/noExplicitAny: Compute Engine JSON whose shape each caller knows
export type GceAnswer = { ok: true; value: any } | { ok: false; error: GceError };

export interface GceCall {
  /** Discovery method id, for errors and logs. */
  method: string;
  http: "GET" | "POST" | "DELETE";
  /** Relative to the endpoint, e.g. projects/p/zones/z/instances. */
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** Per call; default the API's. */
  timeoutMs?: number;
}

export interface GceApi {
  call(c: GceCall): Promise<GceAnswer>;
}

export interface GceApiConfig {
  endpoint: string;
  account: ServiceAccount;
  timeoutMs: number;
  onCall?: (c: { method: string; status: number; reason?: string; ms: number }) => void;
}

export function readGceError(status: number, text: string, method: string): GceError {
  try {
    const e = JSON.parse(text)?.error;
    if (e && typeof e === "object") {
      const first = Array.isArray(e.errors) ? e.errors[0] : undefined;
      return {
        reason: String(first?.reason ?? e.status ?? "unknown"),
        message: String(e.message ?? first?.message ?? ""),
        status,
        method,
      };
    }
  } catch {}
  return {
    reason: status >= 500 ? "backendError" : "MalformedResponse",
    message: `GCE answered ${status}: ${text.slice(0, 200)}`,
    status,
    method,
  };
}

export function createGceApi(cfg: GceApiConfig): GceApi {
  async function once(c: GceCall): Promise<GceAnswer> {
    const t = await accessToken(cfg.account, { timeoutMs: cfg.timeoutMs });
    if (!t.ok) return { ok: false, error: { reason: t.code, message: t.message, status: t.status, method: "oauth2.token" } };
    const url = new URL(c.path, cfg.endpoint);
    for (const [k, v] of Object.entries(c.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const timeoutMs = c.timeoutMs ?? cfg.timeoutMs;
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method: c.http,
        headers: {
          authorization: `Bearer ${t.token}`,
          accept: "application/json",
          ...(c.body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: c.body === undefined ? undefined : JSON.stringify(c.body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
      const message = timedOut
        ? `no answer from GCE within ${timeoutMs} ms`
        : `could not reach GCE: ${err instanceof Error ? err.message : String(err)}`;
      return { ok: false, error: { reason: "NetworkError", message, status: 0, method: c.method } };
    }
    if (!res.ok) return { ok: false, error: readGceError(res.status, text, c.method) };
    try {
      return { ok: true, value: text ? JSON.parse(text) : {} };
    } catch {
      return {
        ok: false,
        error: { reason: "MalformedResponse", message: `GCE's ${c.method} answer is not JSON`, status: res.status, method: c.method },
      };
    }
  }
  return {
    async call(c) {
      const started = Date.now();
      let a = await once(c);
      if (!a.ok && a.error.status === 401 && a.error.method !== "oauth2.token") {
        forgetToken(cfg.account);
        a = await once(c);
      }
      cfg.onCall?.({
        method: a.ok ? c.method : a.error.method,
        status: a.ok ? 200 : a.error.status,
        reason: a.ok ? undefined : a.error.reason,
        ms: Date.now() - started,
      });
      return a;
    },
  };
}
