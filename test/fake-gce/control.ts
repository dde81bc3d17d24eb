import type { GceFaults, GceInstance, GceProject, GceProjectConfig, RecordedGceRequest } from "./types.ts";

export type * from "./types.ts";

async function call<T>(url: string, method: string, body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`fake GCE control ${method} ${url}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** One project on the fake Compute Engine (its own key, instances and faults) and the knobs to drive it. Works in Node and workerd. */
export interface FakeGceProject extends GceProject {
  /** The compute API root to give the shim as GCE_ENDPOINT. */
  endpoint: string;
  instances(): Promise<GceInstance[]>;
  seedInstance(i: Partial<GceInstance> & { name: string; zone?: string }): Promise<GceInstance>;
  patchInstance(zone: string, name: string, fields: Partial<GceInstance>): Promise<GceInstance>;
  requests(): Promise<RecordedGceRequest[]>;
  setFaults(f: GceFaults): Promise<void>;
  configure(c: GceProjectConfig): Promise<void>;
  reset(): Promise<void>;
  /** Every access token issued so far answers 401 from now on. */
  revokeTokens(): Promise<void>;
}

export async function createProject(fakeGceUrl: string, opts: { config?: GceProjectConfig } = {}): Promise<FakeGceProject> {
  return projectClient(fakeGceUrl, await call<GceProject>(`${fakeGceUrl}/_control/projects`, "POST", opts));
}

export function projectClient(fakeGceUrl: string, p: GceProject): FakeGceProject {
  const c = `${fakeGceUrl}/_control/projects/${p.id}`;
  return {
    ...p,
    endpoint: `${fakeGceUrl}/compute/v1/`,
    instances: () => call(`${c}/instances`, "GET"),
    seedInstance: (i) => call(`${c}/instances`, "POST", i),
    patchInstance: (zone, name, fields) => call(`${c}/instances/${zone}/${name}`, "PATCH", fields),
    requests: () => call(`${c}/requests`, "GET"),
    setFaults: (f) => call(`${c}/faults`, "PUT", f),
    configure: (cfg) => call(`${c}/config`, "PATCH", cfg),
    reset: () => call(`${c}/reset`, "POST"),
    revokeTokens: () => call(`${c}/revoke-tokens`, "POST"),
  };
}
