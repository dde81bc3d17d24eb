/**
 * What the audit trail keeps of a write: the request's JSON with every secret replaced by
 * `[redacted]` (the entry still says that a secret was set or changed, never its value).
 *
 * A field is secret by its name (a provider's `secret`, a PAT's `oauth2_token`, an App's
 * `private_key`, any `webhook_secret`, …: SECRET_FIELD) wherever it is nested, or by its value
 * when it looks like a credential whatever its name (a PEM private key, a GitHub token, one of
 * our own `edr_` tokens). test/worker/audit-redaction.test.ts checks every field of every
 * request body in the OpenAPI document against this list, so a new secret field cannot slip in.
 */

export const REDACTED = "[redacted]";

/** Field names whose values are secrets, matched case-insensitively on the whole name. */
export const SECRET_FIELD =
  /^(secret|.*_secret|.*token|.*password|.*passphrase|private_key|.*_private_key|api_key|.*_api_key|client_secret)$/i;

/** Values that are credentials whatever field they are in. */
const SECRET_VALUE = /-----BEGIN [A-Z ]*PRIVATE KEY-----|\b(ghp|gho|ghu|ghs|ghr|github_pat|edr)_[A-Za-z0-9_]{16,}/;

/** The most JSON an entry keeps: a bigger change is recorded as its size only. */
export const MAX_CHANGE_CHARS = 16_384;

export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > 20) return REDACTED;
  if (typeof value === "string") return SECRET_VALUE.test(value) ? REDACTED : value;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = SECRET_FIELD.test(k) && v !== null && v !== undefined ? REDACTED : redactSecrets(v, depth + 1);
    return out;
  }
  return value;
}

/** The `changes` column: `{body?, query?}` redacted, as JSON; null when the request carried neither. */
export function auditChanges(body: unknown, query: Record<string, string>): string | null {
  const change: Record<string, unknown> = {};
  if (body !== undefined) change.body = redactSecrets(body);
  if (Object.keys(query).length) change.query = redactSecrets(query);
  if (!Object.keys(change).length) return null;
  const text = JSON.stringify(change);
  return text.length <= MAX_CHANGE_CHARS ? text : JSON.stringify({ truncated: true, chars: text.length });
}
