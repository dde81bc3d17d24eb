import type { CredentialContext } from "../db/github/github-state-store";
import { logError } from "../observability/log";
import { GithubCredentialElsewhereError } from "./errors";

/**
 * Stored credentials go only to the API they were created for. Each credential records its
 * endpoint's API URL when it is stored (`bound_api_url`); every request that carries its secret,
 * or a token minted with it, must go to a URL under that one. The admin API already refuses to
 * move an endpoint that credentials use; this is the check that holds whatever the endpoint row
 * says (a write that raced the admin API, a row changed by hand, a bug), since a PAT, an App
 * JWT, an installation token, a registration token or an entity's webhook secret sent to
 * another host is given away.
 */

/**
 * Whether `url` lies under `bound`: same scheme, host and port, and a path inside bound's path
 * (`https://ghes/api/v3` admits `/api/v3/repos/…`, never `/api/v3x` or `/other`). Both are
 * parsed, so dot segments and default ports cannot dress up another place.
 */
export function isUnderApiUrl(bound: string, url: string): boolean {
  let b: URL;
  let u: URL;
  try {
    b = new URL(bound);
    u = new URL(url);
  } catch {
    return false;
  }
  if (b.origin !== u.origin || b.username || b.password || u.username || u.password) return false;
  const base = b.pathname.replace(/\/+$/, "");
  return u.pathname === base || u.pathname.startsWith(`${base}/`);
}

/**
 * Throws GithubCredentialElsewhereError, logged as one `github_credentials_elsewhere_refused`
 * event, unless the credential may be sent to `url`. Called before anything is signed or sent.
 */
export function refuseUnlessBound(ctx: CredentialContext, url: string, operation: string): void {
  const bound = ctx.credential.boundApiUrl;
  if (bound !== null && isUnderApiUrl(bound, url)) return;
  const err = new GithubCredentialElsewhereError(ctx.credential.id, operation, bound, withoutQuery(url));
  logError({
    event: "github_credentials_elsewhere_refused",
    credential: ctx.credential.id,
    endpoint: ctx.endpointName,
    operation,
    bound_api_url: bound,
    url: err.url,
    error: err.message,
  });
  throw err;
}

/** Origin and path only: what a log and an error may say about where a call would have gone. */
function withoutQuery(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return "(not a URL)";
  }
}
