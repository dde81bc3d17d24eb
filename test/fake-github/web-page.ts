/**
 * The fake GitHub's web pages (github.com rather than api.github.com): the few a person clicks
 * through to register a GitHub App from a manifest and install it. Pages are plain HTML forms
 * with labelled fields, so a browser test finds them by role and label as a person would.
 */
import type { World } from "./world.ts";

export interface WebRequest {
  method: string;
  /** Path after the world prefix. */
  path: string;
  query: URLSearchParams;
  /** The submitted form (application/x-www-form-urlencoded); empty for a GET. */
  form: URLSearchParams;
  /** The world's web base URL (no trailing slash): pages link and post to absolute URLs under it. */
  base: string;
}

export type WebAnswer = { status: number; html: string } | { status: 302; location: string };

export interface WebRoute {
  method: string;
  pattern: RegExp;
  handler: (w: World, req: WebRequest, m: RegExpExecArray) => WebAnswer | Promise<WebAnswer>;
}

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text made safe for HTML content and attribute values. */
export const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

export function htmlPage(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · GitHub</title></head>` +
    `<body><main>${body}</main></body></html>`
  );
}

/** A page saying what was wrong, the way GitHub shows a refused form. */
export function problemPage(status: number, title: string, problems: string[]): WebAnswer {
  const items = problems.map((p) => `<li>${esc(p)}</li>`).join("");
  return { status, html: htmlPage(title, `<h1>${esc(title)}</h1><ul role="alert">${items}</ul>`) };
}

/** The answer of the first route matching the request, or null when none does. */
export async function answerWebRoute(routes: WebRoute[], w: World, req: WebRequest): Promise<WebAnswer | null> {
  for (const r of routes) {
    const m = r.method === req.method ? r.pattern.exec(req.path) : null;
    if (m) return r.handler(w, req, m);
  }
  return null;
}
