import type { MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { ACCESS_HEADER } from "../../auth/access";
import type { AppEnv } from "../../env";
import { SESSION_COOKIE } from "../session";

/**
 * GitHub sends the browser back to the first-run page (after creating or installing the App) from
 * github.com: a navigation another site started, so the browser withholds the dashboard's
 * SameSite=Strict session cookie, and the page would find no session. This answers such an
 * arrival with a page of ours that reloads the same address at once: a navigation our own page
 * starts carries the cookie. It reads nothing and changes nothing; with the cookie (or a
 * Cloudflare Access identity) present, or on the second arrival, the request goes on to the page.
 */
export const returnFromGithub: MiddlewareHandler<AppEnv> = async (c, next) => {
  const url = new URL(c.req.url);
  if (c.req.method !== "GET" || getCookie(c, SESSION_COOKIE) || c.req.header(ACCESS_HEADER) || url.searchParams.has("bounced")) {
    return next();
  }
  url.searchParams.set("bounced", "1");
  const again = `${url.pathname}${url.search}`;
  return c.html(
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta http-equiv="refresh" content={`0;url=${again}`} />
        <title>Back from GitHub · Edgerunner</title>
      </head>
      <body>
        <p>
          Back from GitHub. <a href={again}>Continue</a>
        </p>
      </body>
    </html>,
  );
};
