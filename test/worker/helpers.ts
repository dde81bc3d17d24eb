import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { addUsageStatements } from "../../src/db/metrics/usage-store";
import { ErrorSchema } from "../../src/http/errors";
import type { TallyUnit } from "../../src/lib/usage-tally";

export const ADMIN_TOKEN = "test-admin-token";
const ORIGIN = "https://edgerunner.test";

export interface CallOptions {
  token?: string | null;
  headers?: Record<string, string>;
  /** Sent as-is instead of JSON-encoding `body`. */
  raw?: string;
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

/** Calls the coordinator through its real fetch handler, as a client would. */
export async function call<T = any>(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let payload: string | undefined;
  if (opts.raw !== undefined) payload = opts.raw;
  else if (body !== undefined) payload = JSON.stringify(body);
  if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
    headers["content-type"] = "application/json";
  }
  return readAnswer<T>(await exports.default.fetch(new Request(`${ORIGIN}${path}`, { method, headers, body: payload })));
}

/** An answer as the tests look at it: its status, its body as JSON (or the text when it is not JSON), its headers. */
export async function readAnswer<T = any>(res: Response): Promise<ApiResponse<T>> {
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON; keep the text
  }
  return { status: res.status, body: parsed as T, text, headers: res.headers };
}

export const api = {
  get: <T = any>(path: string, opts?: CallOptions) => call<T>("GET", path, undefined, opts),
  post: <T = any>(path: string, body?: unknown, opts?: CallOptions) => call<T>("POST", path, body, opts),
  put: <T = any>(path: string, body?: unknown, opts?: CallOptions) => call<T>("PUT", path, body, opts),
  delete: <T = any>(path: string, opts?: CallOptions) => call<T>("DELETE", path, undefined, opts),
};

const TABLES = [
  "github_endpoints",
  "github_credentials",
  "github_credential_state",
  "github_cache",
  "entities",
  "providers",
  "scale_sets",
  "instances",
  "jobs",
  "webhook_deliveries",
  "counters",
  "api_tokens",
];

/**
 * Every row of every table, to prove that a rejected request changed nothing. The audit trail is
 * left out: it records an authenticated refusal by design (audit_log), or counts it when the
 * actor is over its throttle (the `audit.` counters).
 */
export async function dumpDb(): Promise<Record<string, unknown[]>> {
  // usage_days is the coordinator's own metering (src/lib/usage-tally.ts), written every few
  // minutes whatever the request: not a change a request makes. webhook_deliveries has no rowid.
  const tables = TABLES.filter((t) => t !== "usage_days");
  const keys: Record<string, string> = { webhook_deliveries: "delivery_id" };
  const order = (t: string) => keys[t] ?? "rowid";
  const results = await env.DB.batch(tables.map((t) => env.DB.prepare(`SELECT * FROM ${t} ORDER BY ${order(t)}`)));
  const dump = Object.fromEntries(tables.map((t, i) => [t, results[i]!.results]));
  dump.counters = dump.counters!.filter((r) => !String((r as { name: string }).name).startsWith("audit."));
  return dump;
}

/**
 * Asserts a response is a JSON error in the API's one shape: exactly `{error, code, details,
 * request_id}`, `code` from the closed set, and `request_id` the response's X-Request-Id.
 */
export function expectErrorShape(res: ApiResponse, context = ""): void {
  expect(res.headers.get("content-type") ?? "", context).toContain("application/json");
  const parsed = ErrorSchema.safeParse(res.body);
  expect(parsed.success, `${context} ${res.text}`).toBe(true);
  expect(Object.keys(res.body).sort(), context).toEqual(["code", "details", "error", "request_id"]);
  expect(res.body.request_id, context).toBe(res.headers.get("x-request-id"));
}

/** Runs `fn` (which must be rejected with `status`) and asserts the database is unchanged. */
export async function expectRejectedWithoutWrites(status: number, fn: () => Promise<ApiResponse>): Promise<ApiResponse> {
  const before = await dumpDb();
  const res = await fn();
  expect(res.status, res.text).toBe(status);
  expectErrorShape(res);
  expect(await dumpDb()).toEqual(before);
  return res;
}

/** An error body without its per-request id, for comparing two answers. */
export const withoutRequestId = ({ request_id: _, ...rest }: Record<string, unknown>) => rest;

let seq = 0;
/** A name unique within the test file (storage is shared by the tests of one file). */
export const unique = (prefix: string) => `${prefix}-${++seq}-${Math.random().toString(36).slice(2, 7)}`;

async function created<T = any>(res: Promise<ApiResponse<T>>): Promise<T> {
  const r = await res;
  if (r.status !== 201) throw new Error(`expected 201, got ${r.status}: ${r.text}`);
  return r.body;
}

export const seed = {
  patCredentials: (over: Record<string, unknown> = {}) =>
    created(
      api.post("/api/v1/github/credentials", {
        name: unique("pat"),
        auth_type: "pat",
        pat: { oauth2_token: `ghp_${unique("tok")}` },
        ...over,
      }),
    ),
  repository: async (over: Record<string, unknown> = {}) => {
    const creds = over.credentials_name ? null : await seed.patCredentials();
    return created(
      api.post("/api/v1/repositories", {
        owner: "octo",
        name: unique("repo"),
        credentials_name: creds?.name,
        webhook_secret: `whsec-${unique("s")}`,
        ...over,
      }),
    );
  },
  organization: async (over: Record<string, unknown> = {}) => {
    const creds = over.credentials_name ? null : await seed.patCredentials();
    return created(
      api.post("/api/v1/organizations", {
        name: unique("org"),
        credentials_name: creds?.name,
        webhook_secret: `whsec-${unique("s")}`,
        ...over,
      }),
    );
  },
  provider: (over: Record<string, unknown> = {}) =>
    created(
      api.post("/api/v1/providers", {
        name: unique("prov"),
        url: "https://shim.example.com",
        secret: `provider-secret-${unique("x")}`,
        ...over,
      }),
    ),
  scaleSet: async (entityPath: string, over: Record<string, unknown> = {}) => {
    const provider = over.provider_name ? null : await seed.provider();
    return created(
      api.post(`/api/v1/${entityPath}/scalesets`, {
        name: unique("ss"),
        provider_name: provider?.name,
        labels: ["self-hosted", "linux"],
        max_runners: 5,
        image: "ubuntu:24.04",
        flavor: "small",
        ...over,
      }),
    );
  },
};

/** Puts an instance row in D1 directly (the scale set object creates them in production). */
export async function insertInstance(scaleSetId: string, over: Record<string, unknown> = {}) {
  const row = {
    id: crypto.randomUUID(),
    name: unique("runner"),
    scale_set_id: scaleSetId,
    provider_id: null,
    status: "running",
    runner_status: "idle",
    addresses: "[]",
    create_attempt: 1,
    created_at: Date.now(),
    updated_at: Date.now(),
    status_changed_at: Date.now(),
    ...over,
  };
  // A deleted instance has its deletion time, as the status change that deletes one sets it.
  if (row.status === "deleted" && !("deleted_at" in row)) Object.assign(row, { deleted_at: row.status_changed_at });
  const cols = Object.keys(row);
  await env.DB.prepare(`INSERT INTO instances (${cols.join(",")}) VALUES (${cols.map(() => "?").join(",")})`)
    .bind(...Object.values(row))
    .run();
  return row;
}

/** One entry of an instance's history, as its columns were named when transitions had a table. */
export interface TransitionRow {
  at: number;
  field: "status" | "runner_status";
  from_value: string | null;
  to_value: string;
  reason: string;
}

/** An instance's history (`instances.transitions`), oldest first. */
export async function transitionsOf(instanceId: string): Promise<TransitionRow[]> {
  const row = await env.DB.prepare("SELECT transitions FROM instances WHERE id = ?").bind(instanceId).first<{ transitions: string }>();
  const history = JSON.parse(row?.transitions ?? "[]") as {
    at: number;
    field: TransitionRow["field"];
    from: string | null;
    to: string;
    reason: string;
  }[];
  return history.map((t) => ({ at: t.at, field: t.field, from_value: t.from, to_value: t.to, reason: t.reason }));
}

/** Runs `fn` inside a scale set's Durable Object, with the object itself (its private state included). */
export function inScaleSetObject<R>(scaleSetId: string, fn: (obj: any, state: DurableObjectState) => R | Promise<R>): Promise<R> {
  const ns = env.SCALE_SET as unknown as DurableObjectNamespace;
  const run = runInDurableObject as unknown as (s: DurableObjectStub, f: typeof fn) => Promise<R>;
  return run(ns.get(ns.idFromName(scaleSetId)), fn);
}

/** A row of this month's usage (usage_days) as the counters' flush would add it, as a statement to run or batch. */
export function usageRow(day: string, unit: TallyUnit, kind: string, value: number): D1PreparedStatement {
  return addUsageStatements(env.DB, day, [[unit, kind, value]])[0]!;
}
