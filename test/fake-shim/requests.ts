import type { RecordedRequest } from "./types.ts";

/** One machine the coordinator asked the shim for: a single create, or one instance of a batch. */
export interface CreateAsked {
  name: string;
  at: number;
  pool_id: string | null;
  /** What the shim answered for it (null: no answer, e.g. a hang). */
  status: number | null;
}

/**
 * Every create the shim was asked for, oldest first, a batch (`POST /v1/instances:batch`)
 * counting once per instance in it: what benchmarks and end-to-end checks count, whichever
 * way the coordinator sent them. Pure (no Node imports): workerd tests use it too.
 */
export function createsAsked(
  requests: Pick<RecordedRequest, "operation" | "at" | "pool_id" | "status" | "body" | "items">[],
): CreateAsked[] {
  return requests.flatMap((r): CreateAsked[] => {
    if (r.operation === "create") {
      const name = (r.body as { name?: unknown } | null)?.name;
      return [{ name: typeof name === "string" ? name : "", at: r.at, pool_id: r.pool_id, status: r.status }];
    }
    if (r.operation !== "create_batch") return [];
    const instances = ((r.body as { instances?: { name?: unknown }[] } | null)?.instances ?? []).map((i) => String(i?.name ?? ""));
    const statuses = new Map((r.items ?? []).map((item) => [item.name, item.status]));
    return instances.map((name) => ({
      name,
      at: r.at,
      pool_id: r.pool_id,
      status: statuses.get(name) ?? (r.status === 200 ? null : r.status),
    }));
  });
}
