import type { MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import type { AppEnv } from "../env";
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
 * Everything but the login page needs a session; POSTs also need the session's CSRF token and
 * must come from our own origin. A GET without a session goes to the login page.
 */
export const requireSession: MiddlewareHandler<UiEnv> = async (c, next) => {
  const expected = c.env.ADMIN_TOKEN;
  const session = expected ? await readSession(expected, getCookie(c, SESSION_COOKIE)) : null;
  if (!session) {
    if (c.req.method === "GET" || c.req.method === "HEAD") return c.redirect("/ui/login", 303);
    return c.html(
      <Page title="Not logged in">
        <p class="flash bad">Not logged in (or the session expired).</p>
        <a href="/ui/login">Log in</a>
      </Page>,
      401,
    );
  }
  c.set("session", session);
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
