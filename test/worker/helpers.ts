import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";

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
  const res = await exports.default.fetch(new Request(`${ORIGIN}${path}`, { method, headers, body: payload }));
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
  "entities",
  "providers",
  "scale_sets",
  "instances",
  "instance_transitions",
  "jobs",
  "webhook_deliveries",
  "counters",
];

/** Every row of every table, to prove that a rejected request changed nothing. */
export async function dumpDb(): Promise<Record<string, unknown[]>> {
  const results = await env.DB.batch(TABLES.map((t) => env.DB.prepare(`SELECT * FROM ${t} ORDER BY rowid`)));
  return Object.fromEntries(TABLES.map((t, i) => [t, results[i]!.results]));
}

/** Runs `fn` (which must be rejected with `status`) and asserts the database is unchanged. */
export async function expectRejectedWithoutWrites(status: number, fn: () => Promise<ApiResponse>): Promise<ApiResponse> {
  const before = await dumpDb();
  const res = await fn();
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get("content-type") ?? "").toContain("application/json");
  expect(typeof res.body.error).toBe("string");
  expect(await dumpDb()).toEqual(before);
  return res;
}

export const TEST_PRIVATE_KEY = `-----BEGIN RSA PRIVATE KEY-----
MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu
KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQJAIJLixBy2qpFoS4DSmoEm
o3qGy0t6z09AIJtH+5OeRV1be+N4cDYJKffGzDa88vQENZiRm0GRq6a+HPGQMd2k
TQIhAKMSvzIBnni7ot/OSie2TmJLY4SwTQAevXysE2RbFDYdAiEBCUEaRQnMnbp7
9mxDXDf6AU0cN/RPBjb9qSHDcWZHGzUCIG2Es59z8ugGrDY+pxLQnwfotadxd+Uy
v/Ow5T0q5gIJAiEAyS4RaI9YG8EWx/2w0T67ZUVAw8eOMB6BIUg0Xcu+3okCIBOs
/5OiPgoTdSy7bcF9IGpSE8ZgGKzgYQVZeN97YE00
-----END RSA PRIVATE KEY-----`;
