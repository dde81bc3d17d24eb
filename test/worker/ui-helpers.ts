import { exports } from "cloudflare:workers";
import { SESSION_COOKIE } from "../../src/ui/session";
import { ADMIN_TOKEN } from "./helpers";

// The dashboard through the Worker's own fetch handler, as a browser uses it: pages, forms and
// the session cookie a login with a token sets.

export const ORIGIN = "https://edgerunner.test";

export interface Page {
  status: number;
  html: string;
  headers: Headers;
}

export async function ui(
  method: string,
  path: string,
  opts: { cookie?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<Page> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.cookie) headers.cookie = `${SESSION_COOKIE}=${opts.cookie}`;
  let body: string | undefined;
  if (opts.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(opts.form).toString();
  }
  const res = await exports.default.fetch(new Request(`${ORIGIN}${path}`, { method, headers, body, redirect: "manual" }));
  return { status: res.status, html: await res.text(), headers: res.headers };
}

export async function login(token = ADMIN_TOKEN): Promise<{ res: Page; cookie: string | null }> {
  const res = await ui("POST", "/ui/login", { form: { token } });
  const set = res.headers.get("set-cookie") ?? "";
  const m = new RegExp(`${SESSION_COOKIE}=([^;]+)`).exec(set);
  return { res, cookie: m ? m[1]! : null };
}
