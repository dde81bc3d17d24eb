import { z } from "@hono/zod-openapi";

/**
 * The setup check's report: one line per link of the chain a first runner depends on (the
 * coordinator's configuration, GitHub credentials and what they may do, webhooks, provider
 * shims, scale sets), each saying what was found and, when something is wrong, what to do.
 * The same schema validates nothing on the way in (the report is ours) but types the code and
 * writes the OpenAPI document, which the CLI's types are generated from.
 */

export const checkStatuses = ["ok", "warn", "fail", "skip"] as const;
export type CheckStatus = (typeof checkStatuses)[number];

export const DoctorCheckSchema = z
  .object({
    id: z.string().openapi({
      description: "What was checked and of which thing, stable between runs: `<check>` or `<check>:<id of the thing>`",
      example: "entity.access:0f0c2a4e-8a4b-4f6e-9d55-2b8c1b1f5b1e",
    }),
    subject: z.string().openapi({ description: "The thing checked, as people name it", example: "repository octo/app" }),
    status: z.enum(checkStatuses).openapi({
      description: "ok; warn: works, but something will bite later; fail: this link is broken; skip: not checked, and why",
    }),
    summary: z.string().openapi({ description: "What was found, in one sentence" }),
    fix: z.string().optional().openapi({ description: "What to do about a warn or a fail" }),
    details: z.record(z.string(), z.unknown()).optional().openapi({ description: "The facts behind the verdict (never a secret)" }),
  })
  .openapi("DoctorCheck");
export type DoctorCheck = z.infer<typeof DoctorCheckSchema>;

export const DoctorReportSchema = z
  .object({
    ok: z.boolean().openapi({ description: "No check failed (warnings and skips allowed)" }),
    checked_at: z.iso.datetime(),
    public_url: z.string().nullable().openapi({
      description: "PUBLIC_URL as configured: where GitHub and runner machines must reach the coordinator (the CLI checks it from outside)",
    }),
    checks: z.array(DoctorCheckSchema),
  })
  .openapi("DoctorReport");
export type DoctorReport = z.infer<typeof DoctorReportSchema>;

/** A check, with `fix` and `details` left out when there is nothing to say. */
export function check(
  id: string,
  subject: string,
  status: CheckStatus,
  summary: string,
  extra: { fix?: string | undefined; details?: Record<string, unknown> | undefined } = {},
): DoctorCheck {
  return {
    id,
    subject,
    status,
    summary,
    ...(extra.fix !== undefined && { fix: extra.fix }),
    ...(extra.details !== undefined && { details: extra.details }),
  };
}

/** The worst of some statuses: fail over warn over ok; skip only when nothing else was said. */
export function worst(statuses: CheckStatus[]): CheckStatus {
  for (const s of ["fail", "warn", "ok"] as const) if (statuses.includes(s)) return s;
  return "skip";
}

export function assembleReport(checks: DoctorCheck[], publicUrl: string | null, now: number): DoctorReport {
  return {
    ok: !checks.some((c) => c.status === "fail"),
    checked_at: new Date(now).toISOString(),
    public_url: publicUrl,
    checks,
  };
}

/** One thing found while checking a subject; a check gathers several into one line. */
export interface Finding {
  status: CheckStatus;
  text: string;
  fix?: string;
}

/**
 * A check whose verdict is the worst of its findings. The summary leads with what is wrong,
 * worst first (`okText` when nothing is), followed by what was found fine.
 */
export function fromFindings(
  id: string,
  subject: string,
  findings: Finding[],
  okText: string,
  details?: Record<string, unknown>,
): DoctorCheck {
  const status = findings.length ? worst(findings.map((f) => f.status)) : "ok";
  const problems = findings.filter((f) => f.status !== "ok").sort((a, b) => rank(b.status) - rank(a.status));
  const fine = findings.filter((f) => f.status === "ok");
  const summary = [problems.length ? problems.map((f) => f.text).join(" ") : okText, ...fine.map((f) => f.text)].join(" ");
  const fixes = [...new Set(problems.map((f) => f.fix).filter((f): f is string => Boolean(f)))];
  return check(id, subject, status, summary, { fix: fixes.length ? fixes.join("; ") : undefined, details });
}

const rank = (s: CheckStatus) => ({ fail: 3, warn: 2, skip: 1, ok: 0 })[s];
