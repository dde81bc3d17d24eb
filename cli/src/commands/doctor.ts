/**
 * `edgerunner doctor`: the coordinator's setup check (GET /api/v1/doctor), plus the one check
 * only something outside Cloudflare can make: does PUBLIC_URL answer from here. One line per
 * check, the fix under each warning and failure; exit 4 when a check failed.
 */

import type { components } from "../api-types.ts";
import { unwrap } from "../client.ts";
import { type Command, type Io, str } from "../command.ts";
import { EXIT } from "../errors.ts";
import { scaleSetId } from "../resolve.ts";

type Report = components["schemas"]["DoctorReport"];
type Check = components["schemas"]["DoctorCheck"];
type Status = Check["status"];

export const MARKS: Record<Status, string> = { ok: "✓", warn: "!", fail: "✗", skip: "-" };

/** How long the outside request to PUBLIC_URL may take. */
export const OUTSIDE_TIMEOUT_MS = 10_000;

const OUTSIDE_ID = "cli.public_url_outside";
const SUBJECT = "PUBLIC_URL, seen from here";

/** GET <PUBLIC_URL>/healthz from where the CLI runs: what GitHub and runner machines will meet. */
export async function outsideCheck(publicUrl: string | null, fetchImpl: typeof fetch): Promise<Check> {
  if (!publicUrl) return { id: OUTSIDE_ID, subject: SUBJECT, status: "skip", summary: "PUBLIC_URL is not usable (above)." };
  const url = `${publicUrl.replace(/\/+$/, "")}/healthz`;
  const started = Date.now();
  let res: Response;
  try {
    res = await fetchImpl(url, { redirect: "manual", signal: AbortSignal.timeout(OUTSIDE_TIMEOUT_MS) });
  } catch (err) {
    const cause = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    return {
      id: OUTSIDE_ID,
      subject: SUBJECT,
      status: "fail",
      summary: `${url} could not be reached from here (${cause}).`,
      fix: "Check that the Worker is deployed and that PUBLIC_URL is its address (workers.dev subdomain or route); GitHub cannot deliver to an address you cannot reach",
    };
  }
  const ms = Date.now() - started;
  const details = { url, status: res.status, duration_ms: ms };
  const location = res.headers.get("location") ?? "";
  if (res.status >= 300 && res.status < 400 && /cloudflareaccess\.com/i.test(location)) {
    return {
      id: OUTSIDE_ID,
      subject: SUBJECT,
      status: "warn",
      summary: `${url} sends visitors to Cloudflare Access to sign in.`,
      fix: 'GitHub, Gitea and runner machines cannot sign in: give /webhooks/github, /webhooks/gitea, /api/v1/metadata, /api/v1/callbacks and /api/v1/providers/*/callbacks a Bypass policy (docs/operations.md, "Let machines through")',
      details,
    };
  }
  const body = res.status === 200 ? ((await res.json().catch(() => null)) as { status?: unknown } | null) : null;
  if (body?.status === "ok") {
    return { id: OUTSIDE_ID, subject: SUBJECT, status: "ok", summary: `${url} answered in ${ms} ms.`, details };
  }
  return {
    id: OUTSIDE_ID,
    subject: SUBJECT,
    status: "fail",
    summary: `${url} answered HTTP ${res.status}, not the coordinator's {"status":"ok"}.`,
    fix: "PUBLIC_URL must be the address this Worker answers at: check it in wrangler.toml against the workers.dev subdomain or route it is deployed to",
    details,
  };
}

/** The report with the outside check put after the coordinator's own PUBLIC_URL checks. */
export function withOutsideCheck(report: Report, outside: Check): Report {
  const checks = [...report.checks];
  const after = checks.map((c) => c.id).lastIndexOf("config.public_url_reachable");
  checks.splice(after >= 0 ? after + 1 : 0, 0, outside);
  return { ...report, checks, ok: !checks.some((c) => c.status === "fail") };
}

/** One line per check, the fix indented under it, and a last line of counts. */
export function renderReport(report: Report): string {
  const lines: string[] = [];
  for (const c of report.checks) {
    lines.push(`${MARKS[c.status]} ${c.subject}: ${c.summary}`);
    if (c.fix && (c.status === "fail" || c.status === "warn")) lines.push(`    fix: ${c.fix}`);
  }
  const n = { ok: 0, warn: 0, fail: 0, skip: 0 };
  for (const c of report.checks) n[c.status]++;
  lines.push("");
  lines.push(
    `${n.ok} ok, ${n.warn} warning(s), ${n.fail} failed, ${n.skip} skipped: ` +
      (report.ok ? "every link works." : "fix the failures from the top; the first is often the cause of the rest."),
  );
  return `${lines.join("\n")}\n`;
}

export const doctorCommands: Command[] = [
  {
    words: ["doctor"],
    summary: "Check every link a runner depends on (configuration, the forge, webhooks, shims, scale sets) and say what to fix",
    options: {
      scaleset: { type: "string", arg: "ID|NAME", description: "only this scale set and what it stands on" },
    },
    example: "edgerunner doctor [--scaleset linux-small] [--json]",
    run: async (ctx) => {
      const api = ctx.api();
      const ref = str(ctx.values, "scaleset");
      const query = ref ? { scaleset: await scaleSetId(api, ref) } : {};
      const io: Io = ctx.io;
      if (ctx.values.json !== true) io.stderr("checking the configuration, forges, webhooks, shims and scale sets…\n");
      const report = await unwrap(api.GET("/api/v1/doctor", { params: { query } }));
      const full = withOutsideCheck(report, await outsideCheck(report.public_url, io.fetch ?? fetch));
      return { data: full, text: renderReport(full), ...(full.ok ? {} : { exit: EXIT.checks }) };
    },
  },
];
