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
  setFaults(f: Faults): Promise<void>;
  addRule(rule: FaultRule): Promise<void>;
  reset(): Promise<void>;
}

export async function createTenant(shimUrl: string, opts: { secret: string; callbackUrl?: string }): Promise<FakeShimTenant> {
  const { id, url } = await call<{ id: string; url: string }>(`${shimUrl}/_control/tenants`, "POST", {
    secret: opts.secret,
    callback_url: opts.callbackUrl,
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
    setFaults: (f) => call(`${c}/faults`, "PUT", f),
    addRule: (r) => call(`${c}/faults/rules`, "POST", r),
    reset: () => call(`${c}/reset`, "POST"),
  };
}
