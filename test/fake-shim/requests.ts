import type { RecordedRequest } from "./types.ts";

/** One machine the coordinator asked the shim for: a single create, or one instance of a batch. */
export interface CreateAsked {
  name: string;
  at: number;
  pool_id: string | null;
  /** What the shim answered for it (null: no answer, e.g. a hang). */
  status: number | null;
  /** What it was asked to be made from (empty when the body had none); shape null: not a shaped create. */
  flavor: string;
  image: string;
  shape: { disk_gb: number | null; spot: boolean } | null;
}

type Asked = { name?: unknown; flavor?: unknown; image?: unknown; shape?: unknown } | null | undefined;

/** The parts of one BootstrapInstance a check reads, whatever the body held. */
function what(b: Asked) {
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  const shape = b?.shape && typeof b.shape === "object" ? (b.shape as CreateAsked["shape"]) : null;
  return { name: text(b?.name), flavor: text(b?.flavor), image: text(b?.image), shape };
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
    if (r.operation === "create") return [{ ...what(r.body as Asked), at: r.at, pool_id: r.pool_id, status: r.status }];
    if (r.operation !== "create_batch") return [];
    const instances = ((r.body as { instances?: Asked[] } | null)?.instances ?? []).map(what);
    const statuses = new Map((r.items ?? []).map((item) => [item.name, item.status]));
    return instances.map((i) => ({
      ...i,
      at: r.at,
      pool_id: r.pool_id,
      status: statuses.get(i.name) ?? (r.status === 200 ? null : r.status),
    }));
  });
}
