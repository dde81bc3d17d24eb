import type { Ec2Account, Ec2AccountConfig, Ec2Faults, FakeInstance, RecordedEc2Request } from "./types.ts";

export type { Ec2Account, Ec2AccountConfig, Ec2Faults, FakeInstance, LaunchFault, RecordedEc2Request } from "./types.ts";

async function call<T>(url: string, method: string, body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`fake EC2 control ${method} ${url}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** One account on the fake EC2 (its own instances, tokens and faults) and the knobs to drive it. Works in Node and workerd. */
export interface FakeEc2Account extends Ec2Account {
  endpoint: string;
  instances(): Promise<FakeInstance[]>;
  seedInstance(i: Partial<FakeInstance>): Promise<FakeInstance>;
  patchInstance(id: string, fields: Partial<FakeInstance>): Promise<FakeInstance>;
  requests(): Promise<RecordedEc2Request[]>;
  setFaults(f: Ec2Faults): Promise<void>;
  configure(c: Ec2AccountConfig): Promise<void>;
  reset(): Promise<void>;
}

export async function createAccount(
  fakeEc2Url: string,
  opts: { region?: string; session_token?: string; config?: Ec2AccountConfig } = {},
): Promise<FakeEc2Account> {
  return accountClient(fakeEc2Url, await call<Ec2Account>(`${fakeEc2Url}/_control/accounts`, "POST", opts));
}

export function accountClient(fakeEc2Url: string, a: Ec2Account): FakeEc2Account {
  const c = `${fakeEc2Url}/_control/accounts/${a.id}`;
  return {
    ...a,
    endpoint: fakeEc2Url,
    instances: () => call(`${c}/instances`, "GET"),
    seedInstance: (i) => call(`${c}/instances`, "POST", i),
    patchInstance: (id, fields) => call(`${c}/instances/${id}`, "PATCH", fields),
    requests: () => call(`${c}/requests`, "GET"),
    setFaults: (f) => call(`${c}/faults`, "PUT", f),
    configure: (cfg) => call(`${c}/config`, "PATCH", cfg),
    reset: () => call(`${c}/reset`, "POST"),
  };
}
