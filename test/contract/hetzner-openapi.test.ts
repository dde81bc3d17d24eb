/**
 * The Hetzner shim and the fake Hetzner Cloud against Hetzner's OpenAPI description
 * (test/fixtures/hetzner/cloud-openapi-trimmed.json, its _source says where it came from): the
 * shim (run here in Node, signed requests as the coordinator sends them) drives the fake through
 * every call it makes, and each call the fake recorded is checked: the operation exists, its
 * query parameters are declared, the shim's JSON body fits the request schema, and the fake's
 * status and body are ones the description gives for it.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ShimEnv } from "../../shims/hetzner/config.ts";
import worker from "../../shims/hetzner/worker.ts";
import { signRequest } from "../../src/providers/shim-signing.ts";
import { createProject, type FakeHetznerProject, type RecordedHetznerRequest } from "../fake-hetzner/control.ts";
import { type FakeHetzner, startFakeHetzner } from "../fake-hetzner/server.ts";

type Schema = {
  type?: string;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  enum?: unknown[];
  nullable?: boolean;
  allOf?: Schema[];
  pattern?: string;
};
interface Operation {
  parameters: { name: string; in: string; required?: boolean; schema?: Schema }[];
  requestBody?: { content: { "application/json": { schema: Schema } } };
  responses: Record<string, { content?: { "application/json": { schema: Schema } } }>;
}
const spec = JSON.parse(readFileSync(new URL("../fixtures/hetzner/cloud-openapi-trimmed.json", import.meta.url), "utf8")) as {
  paths: Record<string, Record<string, Operation>>;
};

/** Where `value` breaks `schema` (the OpenAPI 3.0 subset the description uses); empty when it fits. */
function problems(value: unknown, schema: Schema, at = "$"): string[] {
  if (value === null) return schema.nullable || schema.allOf?.some((s) => s.nullable) ? [] : [`${at}: null`];
  if (schema.allOf) return schema.allOf.flatMap((s) => problems(value, s, at));
  switch (schema.type) {
    case "object": {
      if (typeof value !== "object" || Array.isArray(value)) return [`${at}: not an object`];
      const o = value as Record<string, unknown>;
      const out: string[] = [];
      for (const r of schema.required ?? []) if (!(r in o)) out.push(`${at}.${r}: missing`);
      for (const [k, v] of Object.entries(o)) {
        const s = schema.properties?.[k] ?? (typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined);
        if (s) out.push(...problems(v, s, `${at}.${k}`));
        else if (schema.properties && schema.additionalProperties !== true) out.push(`${at}.${k}: not in the description`);
      }
      return out;
    }
    case "array":
      if (!Array.isArray(value)) return [`${at}: not an array`];
      return schema.items ? value.flatMap((v, i) => problems(v, schema.items!, `${at}[${i}]`)) : [];
    case "string":
      if (typeof value !== "string") return [`${at}: not a string`];
      if (schema.enum && !schema.enum.includes(value)) return [`${at}: ${value} not in ${schema.enum.join(",")}`];
      return schema.pattern && !new RegExp(schema.pattern).test(value) ? [`${at}: ${value} does not match ${schema.pattern}`] : [];
    case "integer":
      return Number.isInteger(value) ? [] : [`${at}: not an integer`];
    case "number":
      return typeof value === "number" ? [] : [`${at}: not a number`];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${at}: not a boolean`];
    default:
      return [];
  }
}

/** The description's operation for a recorded call: its path template and method. */
function operationFor(r: RecordedHetznerRequest): { template: string; op: Operation } | null {
  const path = r.path.split("?")[0]!;
  for (const [template, ops] of Object.entries(spec.paths)) {
    const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[0-9]+")}$`);
    const op = ops[r.method.toLowerCase()];
    if (re.test(path) && op) return { template, op };
  }
  return null;
}

function check(r: RecordedHetznerRequest): string[] {
  const found = operationFor(r);
  if (!found) return [`${r.method} ${r.path}: no such operation in the description`];
  const { op } = found;
  const out: string[] = [];
  const query = new URLSearchParams(r.path.split("?")[1] ?? "");
  const declared = new Set(op.parameters.filter((p) => p.in === "query").map((p) => p.name));
  for (const name of query.keys()) if (!declared.has(name)) out.push(`query parameter ${name} is not declared`);
  if (r.body !== undefined) {
    const schema = op.requestBody?.content["application/json"].schema;
    if (!schema) out.push("a body where the operation takes none");
    else out.push(...problems(r.body, schema, "request"));
  }
  const response = op.responses[String(r.status)] ?? op.responses[`${String(r.status)[0]}xx`];
  if (!response) out.push(`status ${r.status} is not among ${Object.keys(op.responses).join(", ")}`);
  else {
    const schema = response.content?.["application/json"].schema;
    if (schema) out.push(...problems(r.answer, schema, "response"));
  }
  return out.map((p) => `${r.method} ${r.path} → ${r.status}: ${p}`);
}

const SECRET = "contract-hetzner-secret-0123456789";
const POOL = "0f0c2a4e-8a4b-4f6e-9d55-2b8c1b1f5b1e";
let fake: FakeHetzner;
let project: FakeHetznerProject;

async function call(method: string, path: string, body?: unknown, env: Partial<ShimEnv> = {}) {
  const raw = body === undefined ? "" : JSON.stringify(body);
  const url = `https://shim.example.test${path}`;
  const signed = await signRequest(SECRET, { method, pathWithQuery: path, body: raw });
  const res = await worker.fetch(
    new Request(url, {
      method,
      headers: {
        "X-Edgerunner-Controller-Id": "5a3f8e1c-2b7d-4c1e-9f0a-6d4b3c2a1e0f",
        "X-Edgerunner-Pool-Id": POOL,
        "X-Edgerunner-Pool-Extra-Specs": btoa("{}"),
        ...signed,
        ...(raw ? { "content-type": "application/json" } : {}),
      },
      body: raw || undefined,
    }),
    { SHIM_SECRET: SECRET, HCLOUD_TOKEN: project.token, HCLOUD_ENDPOINT: project.endpoint, ...env },
  );
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

let n = 0;
const instance = (extra_specs: Record<string, unknown> = {}) => ({
  name: `contract-hz-${n++}`,
  tools: [],
  repo_url: "https://github.com/octo/app",
  "callback-url": "https://edgerunner.example.com/api/v1/callbacks",
  "metadata-url": "https://edgerunner.example.com/api/v1/metadata",
  "instance-token": "token-for-the-contract-test",
  "ssh-keys": ["ssh-ed25519 AAAA key"],
  extra_specs,
  "github-runner-group": "",
  "ca-cert-bundle": null,
  arch: "amd64",
  os_type: "linux",
  flavor: "cx22",
  image: "ubuntu-24.04",
  pool_id: POOL,
  labels: null,
  user_data_options: { disable_updates_on_boot: true, extra_packages: null, enable_boot_debug: false },
  jit_config_enabled: true,
});

beforeAll(async () => {
  fake = await startFakeHetzner();
  project = await createProject(fake.url, { config: { page_size: 2, boot_delay_ms: 20, stop_delay_ms: 20 } });
});
afterAll(() => fake.stop());

describe("the Hetzner shim and the fake against Hetzner's OpenAPI description", () => {
  it("every call of a full round (create with every option, fallback, retry, list, get, stop, start, delete, errors, flavors) fits the description", async () => {
    await project.setFaults({ create: [{ code: "resource_unavailable", location: "fsn1", times: 1 }] });
    const full = instance({
      locations: ["fsn1", "nbg1"],
      server_types: ["cpx21"],
      placement_group: 3,
      firewalls: [4],
      networks: [5],
      ssh_keys: ["ops"],
      enable_ipv4: false,
      labels: { team: "ci" },
    });
    const made = await call("POST", "/v1/instances", full);
    expect(made.status).toBe(201);
    expect((await call("POST", "/v1/instances", full)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await call("POST", "/v1/instances", instance())).status).toBe(201);
    expect((await call("GET", "/v1/instances")).body).toHaveLength(4);
    expect((await call("GET", `/v1/instances/${made.body.provider_id}`)).status).toBe(200);
    expect((await call("GET", `/v1/instances/${full.name}`)).status).toBe(200);
    expect((await call("POST", `/v1/instances/${made.body.provider_id}/stop`)).status).toBe(204);
    expect((await call("POST", `/v1/instances/${made.body.provider_id}/start`)).status).toBe(204);
    expect((await call("DELETE", `/v1/instances/${made.body.provider_id}`)).status).toBe(204);
    expect((await call("GET", "/v1/instances/123456789")).status).toBe(404);
    await project.configure({ missing_images: ["nope-1"] });
    expect((await call("POST", "/v1/instances", { ...instance(), image: "nope-1" })).status).toBe(422);
    expect((await call("GET", "/v1/instances", undefined, { HCLOUD_TOKEN: "a-token-the-fake-does-not-know" })).status).toBe(403);
    await project.configure({ read_only: true });
    expect((await call("DELETE", "/v1/instances")).status).toBe(403);
    await project.configure({ read_only: false, rate_limit: 1, refill_per_second: 0.01 });
    await call("GET", "/v1/instances");
    expect((await call("GET", "/v1/instances")).status).toBe(503);
    await project.configure({ rate_limit: 3600, refill_per_second: 1 });
    expect((await call("DELETE", "/v1/instances")).status).toBe(204);
    // v1.2: the flavor catalogue and a shaped create read the server types, page by page.
    expect((await call("GET", "/v1/flavors")).status).toBe(200);
    const shaped = { ...instance({ server_types: ["cpx31"] }), flavor: "cx32", shape: { disk_gb: 80, spot: false } };
    expect((await call("POST", "/v1/instances", shaped)).status).toBe(201);

    const recorded = await project.requests();
    const ops = new Set(recorded.map((r) => `${r.method} ${operationFor(r)?.template ?? r.path}`));
    // Every operation the shim uses was exercised (poweroff is the fake's only: the shim shuts down gracefully).
    expect([...ops].sort()).toEqual(
      [
        "DELETE /servers/{id}",
        "GET /actions/{id}",
        "GET /servers",
        "GET /servers/{id}",
        "GET /server_types",
        "POST /servers",
        "POST /servers/{id}/actions/poweron",
        "POST /servers/{id}/actions/shutdown",
      ].sort(),
    );
    expect(recorded.flatMap(check)).toEqual([]);
  });

  it("the fake's other operations fit it too: poweroff and a server's actions", async () => {
    const made = await call("POST", "/v1/instances", instance());
    const auth = { authorization: `Bearer ${project.token}` };
    await fetch(`${project.endpoint}/servers/${made.body.provider_id}/actions/poweroff`, { method: "POST", headers: auth });
    await fetch(`${project.endpoint}/servers/${made.body.provider_id}/actions`, { headers: auth });
    const recorded = (await project.requests()).filter((r) => r.path.includes(`/servers/${made.body.provider_id}/actions`));
    expect(recorded.map((r) => `${r.method} ${r.status}`)).toEqual(["POST 201", "GET 200"]);
    expect(recorded.flatMap(check)).toEqual([]);
  });

  it("the check can fail: a body the description does not allow is caught", () => {
    const r: RecordedHetznerRequest = {
      at: 0,
      method: "POST",
      path: "/servers",
      body: { name: "x", server_type: "cx22", image: 5, labels: { k: "bad value!" } },
      status: 201,
      error_code: null,
      answer: { server: {} },
    };
    const found = check(r);
    expect(found).toContain("POST /servers → 201: request.image: not a string");
    expect(found.some((p) => p.includes("request.labels.k: bad value! does not match"))).toBe(true);
    expect(found.some((p) => p.includes("response.server.id: missing"))).toBe(true);
  });
});
