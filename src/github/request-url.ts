// Where a GitHub request goes: its URL, and the next page of a list. Both are checked against
// the credential's endpoint before a token goes with them (nextLink here, credential-binding.ts
// for every request).

/** A request's query parameters; undefined ones are left out. */
export type QueryParams = Record<string, string | number | boolean | undefined>;

/** A path is relative to the endpoint's API base, unless it is already a URL: a next page's link (nextLink) is followed as given. */
export function buildUrl(base: string, path: string, query: QueryParams | undefined): string {
  const url = /^https?:\/\//.test(path) ? new URL(path) : new URL(base + path);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  return url.toString();
}

/** The `rel="next"` URL, only if it stays on the endpoint's API (never send a token elsewhere). */
export function nextLink(link: string | null, apiBaseUrl: string): string | null {
  if (!link) return null;
  for (const part of link.split(",")) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part.trim());
    if (m) return m[1]!.startsWith(`${apiBaseUrl}/`) ? m[1]! : null;
  }
  return null;
}
