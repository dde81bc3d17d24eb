import { Hono } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import { constantTimeEqual } from "../../crypto/constant-time";
import type { AppEnv } from "../../env";
import { clientKey, countLoginAttempt } from "../../http/auth-throttle";
import { errorResponse } from "../../http/errors";
import { logEvent } from "../../observability/log";
import { createSession, SESSION_COOKIE, SESSION_TTL_MS } from "../session";
import type { UiEnv } from "../session-middleware";
import { LoginPage } from "../views";

/**
 * Where to go after logging in: a dashboard page the login was asked from (`next`), only ever a
 * path of ours, so a crafted login link cannot send the browser elsewhere.
 */
export function afterLogin(next: unknown): string {
  return typeof next === "string" && /^\/ui\/[A-Za-z0-9/_.?=&%-]*$/.test(next) && !next.includes("//") ? next : "/ui";
}

/** Logging in with the admin token: the one dashboard page without a session. */
export const loginRoutes = new Hono<AppEnv>()
  .get("/login", (c) => {
    const next = afterLogin(c.req.query("next"));
    return c.html(<LoginPage next={next === "/ui" ? null : next} />);
  })
  .post("/login", async (c) => {
    // Every attempt counts, and a client over the limit is refused before its token is read.
    const client = clientKey(c.req.header("cf-connecting-ip"));
    const throttled = client && (await countLoginAttempt(c.env, client));
    if (throttled) {
      // A browser gets the page back; anything else (a script) gets the API's Error shape.
      if (!/\btext\/html\b/.test(c.req.header("accept") ?? "")) return errorResponse(c, throttled);
      return c.html(<LoginPage error="Too many login attempts from this address. Wait a minute and try again." />, 429, throttled.headers);
    }
    const expected = c.env.ADMIN_TOKEN;
    const form = await c.req.parseBody();
    const token = typeof form.token === "string" ? form.token.trim() : "";
    if (!expected || !token || !(await constantTimeEqual(token, expected))) {
      logEvent({ event: "ui_login_failed" });
      return c.html(
        <LoginPage error="That is not the admin token." next={typeof form.next === "string" ? afterLogin(form.next) : null} />,
        401,
      );
    }
    const { cookie } = await createSession(expected);
    setCookie(c, SESSION_COOKIE, cookie, { httpOnly: true, secure: true, sameSite: "Strict", path: "/ui", maxAge: SESSION_TTL_MS / 1000 });
    logEvent({ event: "ui_login" });
    return c.redirect(afterLogin(form.next), 303);
  });

/** Logging out: a POST like every action, so it needs the session's CSRF token. */
export const logoutRoutes = new Hono<UiEnv>().post("/logout", (c) => {
  deleteCookie(c, SESSION_COOKIE, { path: "/ui", secure: true, httpOnly: true, sameSite: "Strict" });
  return c.redirect("/ui/login", 303);
});
