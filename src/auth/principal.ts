import type { TokenScope } from "../db/access/schema";

/**
 * Who is making an admin request, and what they may do: set by src/http/admin-auth.ts for every
 * authenticated request and read by the audit trail. `actor` is what the audit trail records:
 * `admin_token`, `token:<name>`, `access:<email>`, or `dashboard` (a dashboard session opened
 * with the admin token).
 */
export interface Principal {
  actor: string;
  scope: TokenScope;
  via: "api" | "dashboard";
}

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** A write is anything but GET, HEAD and OPTIONS: what `read` may not do, and what the audit trail records. */
export const isWrite = (method: string): boolean => !READ_METHODS.has(method.toUpperCase());

/** Whether a principal of `scope` may send `method` (a `read` principal only reads). */
export const scopeAllows = (scope: TokenScope, method: string): boolean => scope === "admin" || !isWrite(method);

export const ADMIN_TOKEN_ACTOR = "admin_token";
export const tokenActor = (name: string) => `token:${name}`;
export const accessActor = (email: string) => `access:${email}`;
