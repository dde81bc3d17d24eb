import { randomUUID } from "node:crypto";
import { listenForCallbacks } from "./callbacks.ts";
import { checks as allChecks, type Check } from "./checks.ts";
import { CheckFailed, CheckSkipped, Context, DEFAULT_PROVIDER, type ProviderConfig } from "./context.ts";

/**
 * The shim conformance kit: drives any provider shim through provider shim protocol v1 and
 * says, check by check, whether it keeps its promises. Used by `npm run shim:conformance`, by CI
 * against every shim this project ships, and by anyone writing a shim for another cloud
 * (docs/writing-a-shim.md). It makes and deletes real machines: point it at a test account.
 */

export interface KitOptions {
  url: string;
  secret: string;
  provider?: Partial<ProviderConfig>;
  controllerId?: string;
  /** Machines the list check makes (default 5). */
  machines?: number;
  /** Per request (default 30 s, the coordinator's default). */
  requestTimeoutMs?: number;
  /** For an asynchronous outcome or a state change (default 60 s). */
  waitMs?: number;
  /** Listen for the shim's callbacks on 127.0.0.1 at this port; 0 or absent: an ephemeral port (async callbacks then unchecked). */
  callbackPort?: number;
  /** Told as each check ends. */
  onResult?: (r: CheckResult) => void;
  checks?: Check[];
}

export interface CheckResult {
  name: string;
  status: "pass" | "fail" | "skip";
  detail: string;
  ms: number;
}

export interface Report {
  url: string;
  results: CheckResult[];
  passed: number;
  failed: number;
  skipped: number;
}

export async function runConformance(o: KitOptions): Promise<Report> {
  const inbox = await listenForCallbacks(o.callbackPort ?? 0, o.secret);
  const ctx = new Context({
    target: { url: o.url, secret: o.secret, controllerId: o.controllerId ?? randomUUID(), timeoutMs: o.requestTimeoutMs ?? 30_000 },
    provider: { ...DEFAULT_PROVIDER, ...o.provider },
    waitMs: o.waitMs ?? 60_000,
    machines: o.machines ?? 5,
    inbox,
    coordinatorUrl: inbox.url,
  });
  const results: CheckResult[] = [];
  try {
    for (const check of o.checks ?? allChecks) {
      const started = Date.now();
      let r: CheckResult;
      try {
        const detail = await check.run(ctx);
        r = { name: check.name, status: "pass", detail: detail ?? "", ms: 0 };
      } catch (err) {
        const status = err instanceof CheckSkipped ? "skip" : "fail";
        const detail =
          err instanceof CheckFailed || err instanceof CheckSkipped
            ? err.message
            : `error: ${err instanceof Error ? err.message : String(err)}`;
        r = { name: check.name, status, detail, ms: 0 };
      }
      r.ms = Date.now() - started;
      results.push(r);
      o.onResult?.(r);
    }
  } finally {
    // Whatever a failed check left behind, in both pools.
    for (const pool of [ctx.poolA, ctx.poolB]) await ctx.send("DELETE", "/v1/instances", { pool }).catch(() => undefined);
    await inbox.close();
  }
  const count = (s: CheckResult["status"]) => results.filter((r) => r.status === s).length;
  return { url: o.url, results, passed: count("pass"), failed: count("fail"), skipped: count("skip") };
}

/** One line per check, then the totals line (`N passed, N failed, N skipped`). */
export function formatResult(r: CheckResult): string {
  const mark = { pass: "PASS", fail: "FAIL", skip: "SKIP" }[r.status];
  return `  ${mark}  ${r.name.padEnd(78)} ${r.detail}`.trimEnd();
}

export const formatTotals = (r: Report) => `${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped`;
