import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { ACCESS_HEADER, accessConfig, verifyAccessJwt } from "../auth/access";
import { accessActor, type Principal } from "../auth/principal";
import type { AppEnv, Env } from "../env";
import { logEvent } from "../observability/log";
import { checkCsrf, csrfToken, readSession, SESSION_COOKIE, type Session } from "./session";
import { Page } from "./views";

/** What the dashboard's pages and actions get from `requireSession`. */
export type UiEnv = AppEnv & { Variables: { session: Session; csrf: string } };

function publicOrigin(url: string | undefined): string | null {
  try {
    return url ? new URL(url).origin : null;
  } catch {
    return null;
  }
}

/**
 * The key sessions and CSRF tokens are signed with: ADMIN_TOKEN (rotating it ends every session),
 * or, on a deployment signed into only through Cloudflare Access, one derived from ENCRYPTION_KEY.
 */
const uiSecret = (env: Env): string => env.ADMIN_TOKEN || `edgerunner/ui-access-only/${env.ENCRYPTION_KEY}`;

/** A dashboard user: the cookie session of an admin-token login (`dashboard`, admin), or an Access identity. */
const DASHBOARD_LOGIN: Principal = { actor: "dashboard", scope: "admin", via: "dashboard" };

type Who = { session: Session; principal: Principal } | { refused: string } | null;

/**
 * Behind Cloudflare Access (ACCESS_TEAM_DOMAIN and ACCESS_AUD set), a request with a valid
 * `Cf-Access-Jwt-Assertion` is signed in as its email, no login page needed; its CSRF tokens
 * are bound to that identity. Without the header, the admin-token login still works.
 */
async function whoIsThis(c: Context<UiEnv>, secret: string): Promise<Who> {
  const access = accessConfig(c.env);
  const jwt = c.req.header(ACCESS_HEADER);
  if (access && jwt) {
    const result = await verifyAccessJwt(access, jwt);
    if (!result.ok) {
      logEvent({ event: "ui_access_refused", error: result.reason });
      return { refused: result.reason };
    }
    return {
      session: { nonce: `access.${result.identity}`, expiresAt: Number.MAX_SAFE_INTEGER },
      principal: { actor: accessActor(result.identity), scope: access.scope, via: "dashboard" },
    };
  }
  const session = c.env.ADMIN_TOKEN ? await readSession(secret, getCookie(c, SESSION_COOKIE)) : null;
  return session && { session, principal: DASHBOARD_LOGIN };
}

/**
 * Everything but the login page needs a session; POSTs also need the session's CSRF token and
 * must come from our own origin. A GET without a session goes to the login page.
 */
export const requireSession: MiddlewareHandler<UiEnv> = async (c, next) => {
  const expected = uiSecret(c.env);
  const who = await whoIsThis(c, expected);
  if (who && "refused" in who) {
    return c.html(
      <Page title="Not signed in">
        <p class="flash bad">{`Cloudflare Access sign-in refused: ${who.refused}.`}</p>
      </Page>,
      401,
    );
  }
  const session = who?.session;
  if (!who || !session) {
    if (c.req.method === "GET" || c.req.method === "HEAD") {
      // Back to this page after logging in (GitHub's return to the first-run page, a bookmarked page); the root needs no hint.
      const here = new URL(c.req.url);
      const next = `${here.pathname}${here.search}`;
      return c.redirect(next === "/ui" || next === "/ui/" ? "/ui/login" : `/ui/login?next=${encodeURIComponent(next)}`, 303);
    }
    return c.html(
      <Page title="Not logged in">
        <p class="flash bad">Not logged in (or the session expired).</p>
        <a href="/ui/login">Log in</a>
      </Page>,
      401,
    );
  }
  c.set("session", session);
  c.set("principal", who.principal);
  c.set("csrf", await csrfToken(expected, session));
  if (c.req.method === "POST") {
    const origin = c.req.header("origin");
    const form = await c.req.parseBody();
    // Our own pages post from the request's origin, or from PUBLIC_URL's when a proxy (wrangler dev) rewrites the URL.
    const sameOrigin = !origin || origin === new URL(c.req.url).origin || origin === publicOrigin(c.env.PUBLIC_URL);
    const tokenOk = await checkCsrf(expected, session, form._csrf);
    if (!sameOrigin || !tokenOk) {
      const why = !tokenOk ? "missing or invalid CSRF token" : "cross-origin form";
      logEvent({ event: "ui_csrf_refused", path: c.req.path, origin: origin ?? null, error: why });
      return c.html(
        <Page title="Refused" csrf={c.get("csrf")}>
          <p class="flash bad">{`Refused (${why}): this form did not carry a valid CSRF token from this dashboard. Reload the page and try again.`}</p>
        </Page>,
        403,
      );
    }
  }
  await next();
};
