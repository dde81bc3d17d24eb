import { logAt } from "../observability/log";
import { countGithubCall } from "../observability/op-counters";
import { githubCallLevel } from "../scaleset/log-levels";

/** Every GitHub call, answered or not, is counted for /metrics and leaves one `github_call` line. */
export function logCall(c: {
  credential: string;
  operation: string;
  method: string;
  status: number | null;
  remaining: number | null;
  started: number;
  now: number;
  ok: boolean;
  error?: string;
}) {
  countGithubCall(c.operation, c.credential, c.ok);
  logAt(githubCallLevel(c.ok), {
    event: "github_call",
    credential: c.credential,
    operation: c.operation,
    method: c.method,
    status: c.status,
    rate_limit_remaining: c.remaining,
    duration_ms: Math.max(0, c.now - c.started),
    ...(c.error !== undefined ? { error: c.error } : !c.ok && { error: `HTTP ${c.status}` }),
  });
}
