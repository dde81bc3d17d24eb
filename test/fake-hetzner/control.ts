import type { FakeServer, HetznerFaults, HetznerProject, HetznerProjectConfig, RecordedHetznerRequest } from "./types.ts";

export type {
  CallFault,
  CreateFault,
  FakeServer,
  HetznerFaults,
  HetznerProject,
  HetznerProjectConfig,
  RecordedHetznerRequest,
} from "./types.ts";

async function call<T>(url: string, method: string, body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`fake Hetzner control ${method} ${url}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** One project on the fake Hetzner Cloud (its own servers, token, rate limit and faults) and the knobs to drive it. Works in Node and workerd. */
export interface FakeHetznerProject extends HetznerProject {
  /** The API base to give the shim as HCLOUD_ENDPOINT. */
  endpoint: string;
  servers(): Promise<FakeServer[]>;
  seedServer(s: Partial<FakeServer>): Promise<FakeServer>;
  requests(): Promise<RecordedHetznerRequest[]>;
  setFaults(f: HetznerFaults): Promise<void>;
  configure(c: HetznerProjectConfig): Promise<void>;
  reset(): Promise<void>;
}

export async function createProject(fakeUrl: string, opts: { config?: HetznerProjectConfig } = {}): Promise<FakeHetznerProject> {
  return projectClient(fakeUrl, await call<HetznerProject>(`${fakeUrl}/_control/projects`, "POST", opts));
}

export function projectClient(fakeUrl: string, p: HetznerProject): FakeHetznerProject {
  const c = `${fakeUrl}/_control/projects/${p.id}`;
  return {
    ...p,
    endpoint: `${fakeUrl}/v1`,
    servers: () => call(`${c}/servers`, "GET"),
    seedServer: (s) => call(`${c}/servers`, "POST", s),
    requests: () => call(`${c}/requests`, "GET"),
    setFaults: (f) => call(`${c}/faults`, "PUT", f),
    configure: (cfg) => call(`${c}/config`, "PATCH", cfg),
    reset: () => call(`${c}/reset`, "POST"),
  };
}
