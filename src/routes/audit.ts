import { createRoute, z } from "@hono/zod-openapi";
import { REFUSAL_LIMITS, REFUSED_ENTRIES_PER_ACTOR_PER_MINUTE } from "../audit/refusal";
import { type AuditRow, auditPage } from "../db/access/audit-store";
import { createDb } from "../db/client";
import { decimalInt, errorResponses, iso, jsonResponse, Timestamp } from "../http/openapi";
import { createRouter } from "../http/router";

/** `GET /audit`: the audit trail (src/http/audit-trail.ts), newest first, paged like /jobs. */

const AuditEntrySchema = z
  .object({
    id: z.int(),
    at: Timestamp,
    actor: z
      .string()
      .openapi({ description: "`admin_token`, `token:<name>`, `access:<email>` or `dashboard`", example: "token:deploy-bot" }),
    via: z.enum(["api", "dashboard"]),
    method: z.string().openapi({ example: "PUT" }),
    route: z.string().openapi({ description: "The route's pattern", example: "/api/v1/scalesets/:id" }),
    path: z.string(),
    resource: z.string().nullable().openapi({ description: "The id or name of the resource written, when there is one" }),
    status: z.int().openapi({ description: "The answer's HTTP status" }),
    request_id: z.string(),
    changes: z.record(z.string(), z.unknown()).nullable().openapi({
      description:
        '`{body?, query?}` as sent, every secret replaced by "[redacted]"; null when the request carried neither, and for a refused write (see `refusal`)',
    }),
    refusal: z
      .object({
        code: z.string().nullable().openapi({ description: "The answer's error code", example: "forbidden" }),
        error: z
          .string()
          .nullable()
          .openapi({ description: "The answer's message, cut to fit", example: "this read-scoped identity may not do this" }),
      })
      .nullable()
      .openapi({
        description:
          `A refused write (4xx): what the answer said, in at most ${REFUSAL_LIMITS.summary} bytes, instead of the request's body and query; null for other entries. ` +
          `An actor's refused writes beyond ${REFUSED_ENTRIES_PER_ACTOR_PER_MINUTE} a minute are not listed, only counted (/metrics: edgerunner_audit_refusals_suppressed_total)`,
      }),
  })
  .openapi("AuditEntry");

const AuditPageSchema = z
  .object({
    entries: z.array(AuditEntrySchema),
    next_cursor: z.string().nullable().openapi({ description: "Pass as `cursor` for the next page; null on the last" }),
  })
  .openapi("AuditPage");

const ListQuery = z.object({
  actor: z
    .string()
    .min(1)
    .max(320)
    .optional()
    .openapi({ description: "Exactly, e.g. `admin_token`, `token:ci`, `access:ana@example.com`" }),
  resource: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .openapi({ description: "A resource id or name (exact), or a path prefix when it starts with `/`, e.g. `/api/v1/providers`" }),
  method: z.enum(["POST", "PUT", "PATCH", "DELETE"]).optional(),
  status: decimalInt(100, 599).optional(),
  since: Timestamp.optional().openapi({ description: "Entries at or after this time" }),
  until: Timestamp.optional().openapi({ description: "Entries before this time" }),
  limit: decimalInt(1, 500).default(50),
  cursor: decimalInt(1, Number.MAX_SAFE_INTEGER).optional().openapi({ description: "`next_cursor` of the previous page" }),
});

function parseChanges(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { unreadable: true };
  }
}

function parseRefusal(text: string | null): z.infer<typeof AuditEntrySchema>["refusal"] {
  if (text === null) return null;
  const r = parseChanges(text) ?? {};
  return { code: typeof r.code === "string" ? r.code : null, error: typeof r.error === "string" ? r.error : null };
}

const view = (r: AuditRow): z.infer<typeof AuditEntrySchema> => ({
  id: r.id,
  at: iso(r.at)!,
  actor: r.actor,
  via: r.via,
  method: r.method,
  route: r.route,
  path: r.path,
  resource: r.resource,
  status: r.status,
  request_id: r.requestId,
  changes: parseChanges(r.changes),
  refusal: parseRefusal(r.refusal),
});

export const auditRoutes = createRouter().openapi(
  createRoute({
    method: "get",
    path: "/audit",
    tags: ["Audit"],
    summary: "The audit trail: every authenticated admin write, newest first",
    request: { query: ListQuery },
    responses: { 200: jsonResponse(AuditPageSchema, "A page of audit entries"), ...errorResponses },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const page = await auditPage(
      createDb(c.env),
      {
        actor: q.actor,
        resource: q.resource,
        method: q.method,
        status: q.status,
        since: q.since === undefined ? undefined : Date.parse(q.since),
        until: q.until === undefined ? undefined : Date.parse(q.until),
        before: q.cursor,
      },
      q.limit,
    );
    return c.json({ entries: page.entries.map(view), next_cursor: page.nextCursor === null ? null : String(page.nextCursor) }, 200);
  },
);
