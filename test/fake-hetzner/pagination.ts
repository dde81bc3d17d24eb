/**
 * Hetzner's pagination (https://docs.hetzner.cloud/reference/cloud#pagination) for the fake's
 * list routes: `page` and `per_page` from the query, at most 50 a page (Hetzner's maximum) and
 * at most `cap`, and the `meta.pagination` block every list answer carries. Pure.
 */

export type PageQueryError = { field: "page" | "per_page"; message: string };

export function paginate<T>(items: T[], query: URLSearchParams, cap = 50): { page: T[]; meta: object } | PageQueryError {
  const page = Number(query.get("page") ?? "1");
  const asked = Number(query.get("per_page") ?? "25");
  if (!Number.isInteger(page) || page < 1) return { field: "page", message: "must be at least 1" };
  if (!Number.isInteger(asked) || asked < 1) return { field: "per_page", message: "must be at least 1" };
  const perPage = Math.min(asked, 50, cap);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  return {
    page: items.slice((page - 1) * perPage, page * perPage),
    meta: {
      pagination: {
        page,
        per_page: perPage,
        previous_page: page > 1 ? page - 1 : null,
        next_page: page < last ? page + 1 : null,
        last_page: last,
        total_entries: items.length,
      },
    },
  };
}
