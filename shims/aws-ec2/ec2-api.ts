import { AwsClient } from "aws4fetch";
import { type QueryParams, queryBody } from "./ec2-params.ts";
import { parseError, parseXml } from "./ec2-xml.ts";

/**
 * The EC2 Query API over fetch: a form-encoded POST per action, signed with SigV4 by aws4fetch,
 * the XML answer parsed. Never throws: an answer is either a parsed document or an Ec2Error.
 * No retries here: a throttled or failed call goes back to the coordinator, which retries with
 * backoff (and a create stays idempotent through its client token).
 */

export interface Ec2Error {
  /** EC2's error code (`InsufficientInstanceCapacity`, …), or `NetworkError`/`MalformedResponse` when EC2 gave none. */
  code: string;
  message: string;
  /** HTTP status; 0 when no answer came. */
  status: number;
  requestId?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: EC2 XML parsed into a tree whose shape each action knows
export type Ec2Answer = { ok: true; doc: Record<string, any> } | { ok: false; error: Ec2Error };

export interface Ec2Api {
  call(action: string, params: QueryParams): Promise<Ec2Answer>;
}

export interface Ec2ApiConfig {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** Per call. */
  timeoutMs: number;
  /** Told about each call (action, status, error code, duration), for logs. */
  onCall?: (c: { action: string; status: number; code?: string; ms: number }) => void;
}

export function createEc2Api(cfg: Ec2ApiConfig): Ec2Api {
  const aws = new AwsClient({
    accessKeyId: cfg.accessKeyId,
    secretAccessKey: cfg.secretAccessKey,
    sessionToken: cfg.sessionToken || undefined,
    service: "ec2",
    region: cfg.region,
    retries: 0,
  });
  const url = cfg.endpoint.replace(/\/+$/, "") + "/";

  return {
    async call(action, params) {
      const started = Date.now();
      const done = (answer: Ec2Answer, status: number): Ec2Answer => {
        cfg.onCall?.({ action, status, code: answer.ok ? undefined : answer.error.code, ms: Date.now() - started });
        return answer;
      };
      let res: Response;
      let text: string;
      try {
        res = await aws.fetch(url, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8", accept: "text/xml" },
          body: queryBody(action, params),
          signal: AbortSignal.timeout(cfg.timeoutMs),
        });
        text = await res.text();
      } catch (err) {
        const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
        const message = timedOut
          ? `no answer from EC2 within ${cfg.timeoutMs} ms`
          : `could not reach EC2: ${err instanceof Error ? err.message : String(err)}`;
        return done({ ok: false, error: { code: "NetworkError", message, status: 0 } }, 0);
      }
      if (!res.ok) {
        const e = parseError(text);
        const error: Ec2Error = e
          ? { code: e.code, message: e.message, status: res.status, requestId: e.requestId }
          : {
              code: res.status >= 500 ? "ServiceUnavailable" : "MalformedResponse",
              message: `EC2 answered ${res.status}: ${text.slice(0, 200)}`,
              status: res.status,
            };
        return done({ ok: false, error }, res.status);
      }
      try {
        return done({ ok: true, doc: parseXml(text) }, res.status);
      } catch (err) {
        return done(
          {
            ok: false,
            error: {
              code: "MalformedResponse",
              message: `EC2's ${action} answer is not XML: ${(err as Error).message}`,
              status: res.status,
            },
          },
          res.status,
        );
      }
    },
  };
}
