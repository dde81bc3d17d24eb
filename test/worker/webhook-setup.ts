import { env, exports } from "cloudflare:workers";
import { sign } from "@octokit/webhooks-methods";
import { expect } from "vitest";
import { pendingCounts, WEBHOOK_REJECTED } from "../../src/observability/op-counters";
import { type ApiResponse, api, dumpDb, readAnswer } from "./helpers";

/** Builds entities and scale sets through the admin API, as a user would. */
export class World {
  private providerName: string | null = null;
  private credentials = new Map<string, string>();

  constructor(private readonly prefix: string) {}

  async credentialsFor(endpoint = "github.com"): Promise<string> {
    let name = this.credentials.get(endpoint);
    if (!name) {
      name = `${this.prefix}-creds-${endpoint.replace(/[^A-Za-z0-9]/g, "")}`;
      const res = await api.post("/api/v1/github/credentials", {
        name,
        endpoint,
        auth_type: "pat",
        pat: { oauth2_token: "ghp_test" },
      });
      expect(res.status, res.text).toBe(201);
      this.credentials.set(endpoint, name);
    }
    return name;
  }

  async provider(): Promise<string> {
    if (!this.providerName) {
      this.providerName = `${this.prefix}-shim`;
      const res = await api.post("/api/v1/providers", {
        name: this.providerName,
        url: "http://127.0.0.1:9",
        secret: "a-long-provider-shared-secret",
      });
      expect(res.status, res.text).toBe(201);
    }
    return this.providerName;
  }

  async endpoint(name: string, host: string): Promise<string> {
    const res = await api.post("/api/v1/github/endpoints", {
      name,
      base_url: `https://${host}`,
      api_base_url: `https://${host}/api/v3`,
    });
    expect(res.status, res.text).toBe(201);
    return name;
  }

  async repository(
    owner: string,
    name: string,
    secret: string,
    endpoint = "github.com",
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    const res = await api.post("/api/v1/repositories", {
      owner,
      name,
      credentials_name: await this.credentialsFor(endpoint),
      webhook_secret: secret,
      ...extra,
    });
    expect(res.status, res.text).toBe(201);
    return res.body.id;
  }

  async organization(name: string, secret: string, endpoint = "github.com", extra: Record<string, unknown> = {}): Promise<string> {
    const res = await api.post("/api/v1/organizations", {
      name,
      credentials_name: await this.credentialsFor(endpoint),
      webhook_secret: secret,
      ...extra,
    });
    expect(res.status, res.text).toBe(201);
    return res.body.id;
  }

  async enterprise(name: string, secret: string, endpoint = "github.com"): Promise<string> {
    const res = await api.post("/api/v1/enterprises", {
      name,
      credentials_name: await this.credentialsFor(endpoint),
      webhook_secret: secret,
    });
    expect(res.status, res.text).toBe(201);
    return res.body.id;
  }

  async scaleSet(
    kindPath: "repositories" | "organizations" | "enterprises",
    entityId: string,
    name: string,
    labels: string[],
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    const res = await api.post(`/api/v1/${kindPath}/${entityId}/scalesets`, {
      name,
      provider_name: await this.provider(),
      labels,
      max_runners: 5,
      image: "ubuntu:24.04",
      flavor: "small",
      ...extra,
    });
    expect(res.status, res.text).toBe(201);
    return res.body.id;
  }
}

export interface SendOptions {
  event?: string;
  delivery?: string;
  /** Signs with this secret (default: the one passed to send). */
  signature?: string | null;
  headers?: Record<string, string>;
  /** Sent instead of JSON.stringify(payload); signed as sent. */
  raw?: string;
  contentType?: string;
}

let deliveries = 0;
export const newDeliveryId = () => `${crypto.randomUUID()}-${++deliveries}`;

/** Delivers a webhook the way GitHub does: raw JSON body, signed with the hook's secret. */
export async function deliver(payload: unknown, secret: string, opts: SendOptions = {}): Promise<ApiResponse> {
  const body = opts.raw ?? JSON.stringify(payload);
  const headers: Record<string, string> = {
    "content-type": opts.contentType ?? "application/json",
    "user-agent": "GitHub-Hookshot/test",
    "x-github-event": opts.event ?? "workflow_job",
    "x-github-delivery": opts.delivery ?? newDeliveryId(),
    "x-github-hook-id": "1",
    ...opts.headers,
  };
  if (opts.signature !== null) headers["x-hub-signature-256"] = opts.signature ?? (await sign(secret, body));
  for (const [k, v] of Object.entries(headers)) if (v === "") delete headers[k];
  const res = await exports.default.fetch(new Request("https://edgerunner.test/webhooks/github", { method: "POST", headers, body }));
  return readAnswer(res);
}

/** A job's row: the given entity's, or the first to arrive (each signer keeps its own row of a job). */
export async function jobRow(id: number, entityId?: string): Promise<Record<string, any> | null> {
  if (entityId) return env.DB.prepare("SELECT * FROM jobs WHERE id = ? AND entity_id = ?").bind(id, entityId).first();
  return env.DB.prepare("SELECT * FROM jobs WHERE id = ? ORDER BY seq LIMIT 1").bind(id).first();
}

export async function counter(name: string): Promise<number> {
  const row = await env.DB.prepare("SELECT value FROM counters WHERE name = ?").bind(name).first<{ value: number }>();
  return row?.value ?? 0;
}

/** This isolate's count of deliveries rejected for `reason` that D1 does not hold yet. */
export const pendingRejections = (reason: string): number => pendingCounts(WEBHOOK_REJECTED).get(`${WEBHOOK_REJECTED}${reason}`) ?? 0;

/**
 * Runs a delivery that must be rejected with `status`, and proves it wrote nothing at all (D1 is
 * unchanged: a refused request must not cost a write) and was counted in the isolate's memory.
 */
export async function expectRejected(status: number, reason: string, send: () => Promise<ApiResponse>): Promise<ApiResponse> {
  const before = await dumpDb();
  const pending = pendingRejections(reason);
  const res = await send();
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get("content-type") ?? "").toContain("application/json");
  expect(typeof res.body.error).toBe("string");
  expect(await dumpDb()).toEqual(before);
  expect(pendingRejections(reason)).toBe(pending + 1);
  return res;
}
