import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";

/**
 * The dashboard's response headers. The pages carry no script, so the CSP allows nothing but
 * their inline style, and no other site may frame them (clickjacking on the action buttons).
 * Hono's other defaults are off: HSTS is the zone's decision for the whole host (set in
 * Cloudflare), and the cross-origin isolation headers protect nothing on pages without script.
 */
export const securityHeaders: MiddlewareHandler = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    styleSrc: ["'unsafe-inline'"],
    imgSrc: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"],
  },
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
