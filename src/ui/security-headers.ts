import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";

/**
 * The dashboard's response headers. The pages carry no script, so the CSP allows nothing but
 * their inline style, and no other site may frame them (clickjacking on the action buttons).
 * Hono's other defaults are off: HSTS is the zone's decision for the whole host (set in
 * Cloudflare), and the cross-origin isolation headers protect nothing on pages without script.
 */
const CSP = {
  defaultSrc: ["'none'"],
  styleSrc: ["'unsafe-inline'"],
  imgSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
};

/**
 * The same policy, letting this one page's form also post to `origin`: the first-run page's
 * "Continue to GitHub" form, which carries the App manifest to GitHub. The page sets it itself
 * (the middleware keeps a header a page set).
 */
export function cspAllowingFormTo(origin: string): string {
  const directives = { ...CSP, formAction: [...CSP.formAction, origin] };
  return Object.entries(directives)
    .map(([k, v]) => `${k.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`)} ${v.join(" ")}`)
    .join("; ");
}

export const securityHeaders: MiddlewareHandler = secureHeaders({
  contentSecurityPolicy: CSP,
  overwrite: false,
  xFrameOptions: "DENY",
  xContentTypeOptions: true,
  // Not no-referrer: with it Chromium sends `Origin: null` on our own form posts.
  referrerPolicy: "same-origin",
  strictTransportSecurity: false,
  crossOriginEmbedderPolicy: false,
  crossOriginResourcePolicy: false,
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
});

/** Pages show live state and carry CSRF tokens: never from a cache. */
export const noStore: MiddlewareHandler = async (c, next) => {
  await next();
  c.res.headers.set("cache-control", "no-store");
};
