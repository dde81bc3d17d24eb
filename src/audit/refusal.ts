/**
 * What the audit trail keeps of a refused write (a 4xx answer to an authenticated caller): a
 * short trace, not a record of a change. The answer's error code and message stand for the
 * request; its body and query are never kept, and every field the caller chooses (method, path,
 * resource) is cut to a few hundred bytes, so a refused request cannot park bulk text in the
 * trail. How many are kept per actor is throttled (src/db/access/audit-store.ts, insertRefusal).
 */

/**
 * Every 4xx counts as refused, not only a `read` token's 403 and a bad body's 400. By the API's
 * rule a 4xx changes nothing (CONTRIBUTING.md), so there is no change to record, and the answer
 * says what was refused: 404 `not_found` (no such thing), 409 `conflict`/`in_use` (a name taken,
 * still used), 422 `unprocessable`. An admin's script retrying a 409 in a loop would fill the
 * table as fast as a read token's 403s, so they are throttled alike. 401 and 429 never reach the
 * trail: they name no one. Server errors (5xx) keep their full record: they come only from
 * callers allowed to write (a `read` caller's write is refused before any handler runs), and
 * what was sent is what someone debugging needs.
 */
export const isRefusal = (status: number): boolean => status >= 400 && status <= 499;

/**
 * Refused entries kept per actor in any minute; the rest are only counted. Ten is more than a
 * person mistyping makes, and still shows a script that loops on a refusal (with the count of
 * the rest on /metrics); it caps one actor at 14,400 short entries a day instead of a 16 KiB
 * body per request, whatever the request rate.
 */
export const REFUSED_ENTRIES_PER_ACTOR_PER_MINUTE = 10;
export const REFUSAL_WINDOW_MS = 60_000;

/** The most a refused entry keeps of each field the caller chooses, in UTF-8 bytes. */
export const REFUSAL_LIMITS = { method: 16, path: 256, route: 256, resource: 128, summary: 256 } as const;

const ELLIPSIS = "…";
const ELLIPSIS_BYTES = 3;

const utf8Bytes = (cp: number) => (cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);

/** `text` if it fits in `maxBytes` of UTF-8, else as much of it as fits with `…` (never a split character). */
export function clipUtf8(text: string, maxBytes: number): string {
  const mark = maxBytes >= ELLIPSIS_BYTES ? ELLIPSIS : "";
  const room = maxBytes - (mark ? ELLIPSIS_BYTES : 0);
  let bytes = 0;
  let cut = -1;
  let i = 0;
  for (const ch of text) {
    bytes += utf8Bytes(ch.codePointAt(0)!);
    if (cut < 0 && bytes > room) cut = i;
    if (bytes > maxBytes) return text.slice(0, cut) + mark;
    i += ch.length;
  }
  return text;
}

const byteLength = (text: string) => new TextEncoder().encode(text).length;

/**
 * The `refusal` column: `{"code", "error"}` of the answer (the API's error shape), as JSON of at
 * most REFUSAL_LIMITS.summary bytes. `code` comes from the API's closed set; the message is cut
 * to fit (JSON escapes count: a control character takes six bytes). Null fields when the answer
 * was not the API's error JSON.
 */
export function refusalSummary(answer: unknown): string {
  const a = (answer && typeof answer === "object" ? answer : {}) as { code?: unknown; error?: unknown };
  const code = typeof a.code === "string" && /^[a-z_]{1,40}$/.test(a.code) ? a.code : null;
  const error = typeof a.error === "string" ? a.error : null;
  const max = REFUSAL_LIMITS.summary;
  const whole = JSON.stringify({ code, error });
  if (error === null || byteLength(whole) <= max) return whole;
  // Cut the message to the room left; its JSON escapes may still overflow, so cut more until it fits.
  for (let room = max - byteLength(JSON.stringify({ code, error: "" })); ; room -= 8) {
    const cut = JSON.stringify({ code, error: clipUtf8(error, Math.max(0, room)) });
    if (byteLength(cut) <= max || room <= 0) return cut;
  }
}

export interface RefusedRequest {
  method: string;
  route: string;
  path: string;
  resource: string | null;
}

/** The fields of a refused entry the caller chooses, each cut to its limit. */
export function boundedRefusal(r: RefusedRequest): RefusedRequest {
  return {
    method: clipUtf8(r.method, REFUSAL_LIMITS.method),
    route: clipUtf8(r.route, REFUSAL_LIMITS.route),
    path: clipUtf8(r.path, REFUSAL_LIMITS.path),
    resource: r.resource === null ? null : clipUtf8(r.resource, REFUSAL_LIMITS.resource),
  };
}
