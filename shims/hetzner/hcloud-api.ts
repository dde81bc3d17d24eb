/**
 * The Hetzner Cloud API as the shim calls it: JSON over HTTPS with the project's token as a
 * Bearer token. Every answer is either the parsed body or Hetzner's error
 * ({error: {code, message, details}}, https://docs.hetzner.cloud/reference/cloud#errors), with
 * the rate-limit reset time when Hetzner sent one. No retries here: the coordinator retries a
 * 503, and a Worker's subrequests are counted.
 */

export interface HcloudError {
  code: string;
  message: string;
  /** HTTP status; 0 when Hetzner could not be reached. */
  status: number;
  details?: unknown;
  /** Unix seconds from RateLimit-Reset, when sent. */
  rateLimitReset?: number;
}

export type HcloudResult<T = unknown> = { ok: true; status: number; body: T } | { ok: false; error: HcloudError };

export interface HcloudCall {
  method: string;
  path: string;
  status: number;
  code: string | null;
  ms: number;
}

export interface HcloudApi {
  call<T = unknown>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<HcloudResult<T>>;
}

export function createHcloudApi(opts: {
  endpoint: string;
  token: string;
  timeoutMs: number;
  onCall?: (c: HcloudCall) => void;
  fetcher?: typeof fetch;
}): HcloudApi {
  const fetcher = opts.fetcher ?? fetch;
  return {
    async call(method, path, body) {
      const started = Date.now();
      const report = (status: number, code: string | null) => opts.onCall?.({ method, path, status, code, ms: Date.now() - started });
      let res: Response;
      try {
        res = await fetcher(`${opts.endpoint}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${opts.token}`,
            accept: "application/json",
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(opts.timeoutMs),
        });
      } catch (err) {
        report(0, "unreachable");
        return {
          ok: false,
          error: {
            code: "unreachable",
            message: `Hetzner Cloud could not be reached: ${err instanceof Error ? err.message : String(err)}`,
            status: 0,
          },
        };
      }
      const text = await res.text();
      // biome-ignore lint/suspicious/noExplicitAny: Hetzner's JSON, read field by field below
      let json: any = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        // A proxy's HTML page or a cut-off answer: reported below by status.
      }
      if (res.ok && json !== null) {
        report(res.status, null);
        return { ok: true, status: res.status, body: json };
      }
      const reset = Number(res.headers.get("RateLimit-Reset"));
      const e = json?.error;
      const error: HcloudError = {
        code: typeof e?.code === "string" ? e.code : res.ok ? "malformed_response" : `http_${res.status}`,
        message: typeof e?.message === "string" ? e.message : `HTTP ${res.status} without a Hetzner error body`,
        status: res.status,
        details: e?.details ?? undefined,
        ...(Number.isFinite(reset) && reset > 0 ? { rateLimitReset: reset } : {}),
      };
      report(res.status, error.code);
      return { ok: false, error };
    },
  };
}
