import type { FlavorCatalogue } from "../../src/providers/shim-protocol.ts";
import type { FakeMachine, FaultRule, Faults, RecordedCallback, RecordedRequest } from "./types.ts";

export type { FakeMachine, FaultRule, Faults, RecordedCallback, RecordedRequest } from "./types.ts";

async function call<T>(url: string, method: string, body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`fake shim control ${method} ${url}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** One fake cloud on the fake shim server: its provider URL and the knobs to drive it. Works in Node and workerd. */
export interface FakeShimTenant {
  id: string;
  /** The provider URL to register (has a base path: /t/{id}). */
  url: string;
  machines(): Promise<FakeMachine[]>;
  seedMachine(m: { pool_id: string; name: string } & Partial<FakeMachine>): Promise<FakeMachine>;
  patchMachine(providerIdOrName: string, fields: Partial<FakeMachine>): Promise<FakeMachine>;
  removeMachine(providerIdOrName: string): Promise<void>;
  requests(): Promise<RecordedRequest[]>;
  callbacks(): Promise<RecordedCallback[]>;
  /** Callbacks waiting in the outbox (async rules with callback "outbox"), marked taken. */
  takeOutbox(): Promise<RecordedCallback[]>;
  /**
   * batchCreateMax: the largest batch create offered (0: none, protocol v1). flavors: the flavor
   * catalogue offered (protocol v1.2; null: none again).
   */
  configure(c: { secret?: string; callbackUrl?: string; batchCreateMax?: number; flavors?: FlavorCatalogue | null }): Promise<void>;
  setFaults(f: Faults): Promise<void>;
  addRule(rule: FaultRule): Promise<void>;
  reset(): Promise<void>;
}

export async function createTenant(
  shimUrl: string,
  opts: { secret: string; callbackUrl?: string; batchCreateMax?: number; flavors?: FlavorCatalogue | null },
): Promise<FakeShimTenant> {
  const { id, url } = await call<{ id: string; url: string }>(`${shimUrl}/_control/tenants`, "POST", {
    secret: opts.secret,
    callback_url: opts.callbackUrl,
    batch_create_max: opts.batchCreateMax,
    flavors: opts.flavors,
  });
  const c = `${shimUrl}/_control/tenants/${id}`;
  return {
    id,
    url,
    machines: () => call(`${c}/instances`, "GET"),
    seedMachine: (m) => call(`${c}/instances`, "POST", m),
    patchMachine: (k, fields) => call(`${c}/instances/${encodeURIComponent(k)}`, "PATCH", fields),
    removeMachine: (k) => call(`${c}/instances/${encodeURIComponent(k)}`, "DELETE"),
    requests: () => call(`${c}/requests`, "GET"),
    callbacks: () => call(`${c}/callbacks`, "GET"),
    takeOutbox: () => call(`${c}/callbacks/take`, "POST"),
    configure: async (o) => {
      await call(c, "PATCH", { secret: o.secret, callback_url: o.callbackUrl, batch_create_max: o.batchCreateMax, flavors: o.flavors });
    },
    setFaults: (f) => call(`${c}/faults`, "PUT", f),
    addRule: (r) => call(`${c}/faults/rules`, "POST", r),
    reset: () => call(`${c}/reset`, "POST"),
  };
}

/**
 * Delivers the tenant's waiting callbacks through `fetcher` — in workerd tests,
 * `(r) => exports.default.fetch(r)`, since the coordinator there has no address the Node
 * server could reach. The callback is sent exactly as the shim signed it (path, headers, body),
 * on `origin`. Returns what the coordinator answered, in order.
 */
export async function deliverOutbox(
  tenant: FakeShimTenant,
  fetcher: (request: Request) => Promise<Response>,
  origin = "https://edgerunner.test",
): Promise<{ callback: RecordedCallback; status: number; body: unknown }[]> {
  const out = [];
  for (const callback of await tenant.takeOutbox()) {
    const res = await fetcher(new Request(origin + callback.path, { method: "POST", headers: callback.headers, body: callback.body }));
    const text = await res.text();
    out.push({ callback, status: res.status, body: text ? JSON.parse(text) : null });
  }
  return out;
}
