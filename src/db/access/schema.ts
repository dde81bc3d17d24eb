// Who may write through the API (named tokens) and what was written (the audit trail, whose
// actors name those tokens).
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt } from "../columns";

export const tokenScopes = ["read", "admin"] as const;
export type TokenScope = (typeof tokenScopes)[number];

/**
 * Named API tokens (besides ADMIN_TOKEN). Only the SHA-256 of a token is stored: the token is
 * shown once, when it is created. A revoked token keeps its row (the audit trail names it);
 * its name can be taken again.
 */
export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    scope: text("scope", { enum: tokenScopes }).notNull(),
    /** hex SHA-256 of the whole token (see src/http/api-token.ts). */
    tokenHash: text("token_hash").notNull().unique(),
    createdAt: createdAt(),
    /** The actor that created it (same form as the audit trail's). */
    createdBy: text("created_by").notNull(),
    expiresAt: integer("expires_at"),
    /** Updated at most once a minute per token. */
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
  },
  (t) => [uniqueIndex("api_tokens_active_name_idx").on(t.name).where(sql`revoked_at IS NULL`)],
);

/**
 * The audit trail: one row per authenticated admin write (API and dashboard), whatever its
 * result. `changes` is the request's JSON with secrets replaced (src/audit/redact.ts); a refused
 * write (4xx) keeps only `refusal`, and at most a few per actor a minute (src/audit/refusal.ts).
 */
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: integer("at").notNull(),
    /** `admin_token`, `token:<name>`, `access:<email>` or `dashboard` (a dashboard login with the admin token). */
    actor: text("actor").notNull(),
    /** `api` or `dashboard`: where the write came from. */
    via: text("via", { enum: ["api", "dashboard"] }).notNull(),
    method: text("method").notNull(),
    /** The route's pattern, e.g. `/api/v1/providers/:name`. */
    route: text("route").notNull(),
    /** The path as requested. */
    path: text("path").notNull(),
    /** The id or name of the resource written, when there is one. */
    resource: text("resource"),
    status: integer("status").notNull(),
    requestId: text("request_id").notNull(),
    /** JSON `{body?, query?}` with secrets redacted; null when the request carried neither, or was refused. */
    changes: text("changes"),
    /** A refused write's (4xx) JSON `{code, error}` of the answer, at most 256 bytes; null otherwise. */
    refusal: text("refusal"),
  },
  (t) => [
    index("audit_log_at_idx").on(t.at),
    index("audit_log_actor_idx").on(t.actor, t.id),
    index("audit_log_resource_idx").on(t.resource, t.id),
    // The throttle's count of an actor's refusals in the last minute: a range of a few rows of
    // this index, which holds refused entries only (the WHERE must match the count's exactly).
    index("audit_log_refused_idx").on(t.actor, t.at).where(sql`status BETWEEN 400 AND 499`),
  ],
);
