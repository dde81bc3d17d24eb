/**
 * How the fake GitHub's REST routes answer: GitHub's error body, a JSON answer, and GitHub's
 * Link-header pagination. Apart from world.ts so route tables of other files (apps/rest.ts) can
 * use them without importing world.ts, which imports those tables.
 */
import type { FakeRequest, FakeResponse } from "./world.ts";

const DOCS = "https://docs.github.com/rest";

export const error = (status: number, message: string, extra: Record<string, unknown> = {}): FakeResponse => ({
  status,
  headers: {},
  body: { message, documentation_url: DOCS, status: String(status), ...extra },
});

export const json = (status: number, body: unknown, headers: Record<string, string> = {}): FakeResponse => ({ status, headers, body });

/** One page of `items` for `per_page`/`page`, with GitHub's Link header (null when it all fits). */
export function page<T>(req: FakeRequest, items: T[]): { items: T[]; link: string | null } {
  const perPage = Math.min(100, Math.max(1, Number(req.query.per_page ?? 30) || 30));
  const pageNo = Math.max(1, Number(req.query.page ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const slice = items.slice((pageNo - 1) * perPage, pageNo * perPage);
  const href = (n: number) => {
    const q = new URLSearchParams({ ...req.query, per_page: String(perPage), page: String(n) });
    return `<${req.baseUrl}${req.path}?${q}>`;
  };
  const links: string[] = [];
  if (pageNo > 1) links.push(`${href(pageNo - 1)}; rel="prev"`);
  if (pageNo < last) links.push(`${href(pageNo + 1)}; rel="next"`, `${href(last)}; rel="last"`);
  if (pageNo > 1) links.push(`${href(1)}; rel="first"`);
  return { items: slice, link: links.length ? links.join(", ") : null };
}
