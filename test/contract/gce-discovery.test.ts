/**
 * The GCE shim's calls and the fake Compute Engine's answers against Google's discovery document
 * (a trimmed copy in test/fixtures/gce/compute-v1-trimmed.json, its source in its header): every
 * call the shim makes while creating (with a zone fallback), listing, getting, stopping,
 * starting and deleting, and listing machine types for the flavor catalogue, is a method the
 * document has, with its HTTP method, a path that fits the method's path template and parameter
 * patterns, only query parameters the method declares, and a body exactly when the method takes
 * one; the fake records each as that method. Every answer
 * the fake gives those calls fits the method's response schema in the document (no field it does
 * not declare, each with its declared type, int64 and uint64 as strings), and every error answer
 * has Google's error shape.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { readServiceAccountKey } from "../../shims/gce/config.ts";
import { labelValue } from "../../shims/gce/extra-specs.ts";
import { flavors } from "../../shims/gce/flavors.ts";
import { createGceApi, type GceApi, type GceCall } from "../../shims/gce/gce-api.ts";
import { change, create, get, list, type Operations, removeAll } from "../../shims/gce/operations.ts";
import { createProject, type FakeGceProject } from "../fake-gce/control.ts";
import { type FakeGce, startFakeGce } from "../fake-gce/server.ts";

interface Param {
  location: "path" | "query";
  required?: boolean;
  pattern?: string;
  type: string;
}
interface Method {
  id: string;
  httpMethod: string;
  path: string;
  parameters: Record<string, Param>;
  request?: { $ref: string };
  response: { $ref: string };
}
interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  pattern?: string;
  enum?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema;
  /** Not in discovery documents (they mark required fields only in descriptions): used by GOOGLE_ERROR below. */
  required?: string[];
}
const doc = JSON.parse(readFileSync(new URL("../fixtures/gce/compute-v1-trimmed.json", import.meta.url), "utf8")) as {
  resources: Record<string, { methods: Record<string, Method> }>;
  schemas: Record<string, Schema>;
};
const methods = new Map<string, Method>();
for (const r of Object.values(doc.resources)) for (const m of Object.values(r.methods)) methods.set(m.id, m);

/** A regex for the method's path: each {param} by its pattern (anchored), as the document's flatPath. */
function pathRegex(m: Method): RegExp {
  const source = m.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)\}/g, (_, name: string) => {
    const p = m.parameters[name];
    if (p?.location !== "path") throw new Error(`${m.id}: {${name}} is not a path parameter`);
    return `(${p.pattern ? `(?:${p.pattern})` : "[^/]+"})`;
  });
  return new RegExp(`^${source}$`);
}

// The document gives 64-bit integers as strings of digits (JSON numbers cannot hold them), and bytes as base64.
const FORMATS: Record<string, RegExp> = { int64: /^-?[0-9]+$/, uint64: /^[0-9]+$/, byte: /^[A-Za-z0-9+/_-]*={0,2}$/ };

/**
 * Where `value` breaks `schema`, the discovery document's subset of JSON Schema; empty when it
 * fits. A field the schema does not declare is a problem, and so is a $ref the trimmed copy
 * lacks, so that a field nobody checked cannot pass unseen.
 */
function problems(value: unknown, schema: Schema, at = "$"): string[] {
  if (schema.$ref) {
    const target = doc.schemas[schema.$ref];
    return target ? problems(value, target, at) : [`${at}: schema ${schema.$ref} is not in the fixture`];
  }
  switch (schema.type) {
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${at}: not an object`];
      const o = value as Record<string, unknown>;
      const out = (schema.required ?? []).filter((r) => !(r in o)).map((r) => `${at}.${r}: missing`);
      for (const [k, v] of Object.entries(o)) {
        const s = schema.properties?.[k] ?? schema.additionalProperties;
        out.push(...(s ? problems(v, s, `${at}.${k}`) : [`${at}.${k}: not declared`]));
      }
      return out;
    }
    case "array":
      if (!Array.isArray(value)) return [`${at}: not an array`];
      return value.flatMap((v, i) => problems(v, schema.items!, `${at}[${i}]`));
    case "string": {
      if (typeof value !== "string") return [`${at}: not a string${schema.format ? ` (${schema.format})` : ""}`];
      const format = FORMATS[schema.format ?? ""];
      if (format && !format.test(value)) return [`${at}: ${JSON.stringify(value)} is not ${schema.format}`];
      if (schema.enum && !schema.enum.includes(value)) return [`${at}: ${value} is not one of ${schema.enum.join(", ")}`];
      if (schema.pattern && !new RegExp(`^(?:${schema.pattern})$`).test(value)) return [`${at}: ${value} does not match ${schema.pattern}`];
      return [];
    }
    case "integer":
      return Number.isInteger(value) ? [] : [`${at}: not an integer`];
    case "number":
      return typeof value === "number" ? [] : [`${at}: not a number`];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${at}: not a boolean`];
    default:
      return [`${at}: the schema has no type`];
  }
}

/** Google's JSON error answer, which discovery documents do not describe (https://cloud.google.com/apis/design/errors#http_mapping). */
const GOOGLE_ERROR: Schema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message", "errors"],
      properties: {
        code: { type: "integer" },
        message: { type: "string" },
        status: { type: "string" },
        errors: {
          type: "array",
          items: {
            type: "object",
            required: ["reason", "domain", "message"],
            properties: {
              reason: { type: "string" },
              domain: { type: "string" },
              message: { type: "string" },
              location: { type: "string" },
              locationType: { type: "string" },
            },
          },
        },
      },
    },
  },
};

/** The compute API's answers, as they came over the wire (the shim keeps only the parsed body or a GceError). */
const answers: { http: string; path: string; status: number; body: unknown }[] = [];
const realFetch = globalThis.fetch;

let gce: FakeGce;
let project: FakeGceProject;
const calls: GceCall[] = [];
const POOL = "0f0c2a4e-8a4b-4f6e-9d55-2b8c1b1f5b1e";
const CONTROLLER = "5a3f8e1c-2b7d-4c1e-9f0a-6d4b3c2a1e0f";

beforeAll(async () => {
  gce = await startFakeGce();
  project = await createProject(gce.url, { config: { operation_ms: 5, boot_delay_ms: 10, stop_delay_ms: 10, page_size: 1 } });
  vi.stubGlobal("fetch", async (input: string | URL | Request, init?: RequestInit) => {
    const res = await realFetch(input, init);
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.pathname.startsWith("/compute/v1/")) {
      const text = await res.clone().text();
      answers.push({
        http: init?.method ?? "GET",
        path: url.pathname.slice("/compute/v1/".length),
        status: res.status,
        body: text ? JSON.parse(text) : undefined,
      });
    }
    return res;
  });
});
afterAll(() => {
  vi.unstubAllGlobals();
  return gce.stop();
});

async function operations(): Promise<Operations> {
  const account = readServiceAccountKey(JSON.stringify(project.service_account_key), [])!;
  const api = createGceApi({ endpoint: project.endpoint, account, timeoutMs: 10_000 });
  const recording: GceApi = {
    call(c) {
      calls.push(c);
      return api.call(c);
    },
  };
  return {
    gce: recording,
    scope: {
      project: project.id,
      controllerId: CONTROLLER,
      poolId: POOL,
      controllerLabel: await labelValue(CONTROLLER),
      poolLabel: await labelValue(POOL),
    },
    headerSpecs: {},
    zones: ["us-central1-a", "us-central1-b"],
    createDeadlineMs: 10_000,
  };
}

const bootstrap = (name: string) =>
  JSON.stringify({
    name,
    tools: [],
    repo_url: "https://github.com/octo/app",
    "callback-url": "https://edgerunner.example.com/api/v1/callbacks",
    "metadata-url": "https://edgerunner.example.com/api/v1/metadata",
    "instance-token": "token",
    "ssh-keys": null,
    extra_specs: {
      capacity: "spot-with-fallback",
      labels: { team: "ci" },
      network_tags: ["ci"],
      service_account: "r@p.iam.gserviceaccount.com",
    },
    "github-runner-group": "",
    "ca-cert-bundle": null,
    arch: "amd64",
    os_type: "linux",
    flavor: "e2-small",
    image: "projects/debian-cloud/global/images/family/debian-12",
    pool_id: POOL,
    labels: null,
    user_data_options: { disable_updates_on_boot: true, extra_packages: null, enable_boot_debug: false },
    jit_config_enabled: true,
  });

it("every call the shim makes is a discovery-document method, with its HTTP method, path, query parameters and body", async () => {
  await project.setFaults({ insert: [{ code: "ZONE_RESOURCE_POOL_EXHAUSTED", zone: "us-central1-a", provisioning_model: "SPOT" }] });
  const o = await operations();
  const made = [await create(o, bootstrap("contract-1")), await create(o, bootstrap("contract-2"))];
  expect(made.map((a) => a.status)).toEqual([201, 201]);
  const id = (made[0]!.body as { provider_id: string }).provider_id;
  expect((await list(o)).status).toBe(200);
  expect((await get(o, id)).status).toBe(200);
  expect((await change(o, id, "stop")).status).toBe(204);
  // GCE will not start what is still stopping (409, resourceNotReady): tried again, as the coordinator would.
  let started = await change(o, id, "start");
  for (let i = 0; started.status === 409 && i < 100; i++) {
    await new Promise((r) => setTimeout(r, 20));
    started = await change(o, id, "start");
  }
  expect(started.status).toBe(204);
  expect((await change(o, id, "delete")).status).toBe(204);
  expect((await removeAll(o)).status).toBe(204);
  const catalogue = await flavors({ gce: o.gce, project: project.id, account: "contract", headerSpecs: {}, zones: o.zones }, {});
  expect(catalogue.status).toBe(200);

  const used = new Set<string>();
  for (const c of calls) {
    const m = methods.get(c.method);
    expect(m, `${c.method} is not in the discovery document`).toBeDefined();
    used.add(m!.id);
    expect(c.http, c.method).toBe(m!.httpMethod);
    expect(c.path, c.method).toMatch(pathRegex(m!));
    for (const k of Object.keys(c.query ?? {}).filter((k) => c.query![k] !== undefined))
      expect(m!.parameters[k]?.location, `${c.method} has no query parameter ${k}`).toBe("query");
    expect(c.body !== undefined, `${c.method}: a body exactly when the method takes one`).toBe(m!.request !== undefined);
  }
  expect([...used].sort()).toEqual([
    "compute.instances.aggregatedList",
    "compute.instances.delete",
    "compute.instances.get",
    "compute.instances.insert",
    "compute.instances.start",
    "compute.instances.stop",
    "compute.machineTypes.list",
    "compute.zoneOperations.wait",
  ]);
});

it("the role in shims/gce/iam-role.yaml (and its copy in docs/gce-shim.md) holds every permission those calls needed", async () => {
  const roleFile = readFileSync(new URL("../../shims/gce/iam-role.yaml", import.meta.url), "utf8");
  const permissionsIn = (text: string) => new Set([...text.matchAll(/^\s+- ([a-z]+\.[a-zA-Z.]+)/gm)].map((m) => m[1]!));
  const role = permissionsIn(roleFile);
  const docs = readFileSync(new URL("../../docs/gce-shim.md", import.meta.url), "utf8");
  const block = /```yaml\n([\s\S]*?)```/.exec(docs)![1]!;
  expect(roleFile.endsWith(block)).toBe(true);
  // With a service account on the machines the docs add these two (actAs on that account only).
  const withServiceAccount = new Set(["compute.instances.setServiceAccount", "iam.serviceAccounts.actAs"]);
  const needed = new Set((await project.requests()).flatMap((r) => r.permissions));
  expect(needed.size).toBeGreaterThan(5);
  expect([...needed].filter((p) => !role.has(p) && !withServiceAccount.has(p))).toEqual([]);
  for (const p of withServiceAccount) expect(docs).toContain(p);
});

it("the fake serves each of those paths as the method the document names, and its token endpoint took a JWT grant", async () => {
  const recorded = await project.requests();
  const compute = recorded.filter((r) => r.method !== "oauth2.token");
  expect(compute.length).toBeGreaterThan(0);
  for (const r of compute) {
    const m = methods.get(r.method)!;
    expect(m, r.method).toBeDefined();
    expect(r.http_method).toBe(m.httpMethod);
    const [path] = r.path.replace(/^\/compute\/v1\//, "").split("?");
    expect(path).toMatch(pathRegex(m));
  }
  expect(recorded.filter((r) => r.method === "oauth2.token").map((r) => r.status)).toEqual([200]);
  // The fake's list answers page as the document says: nextPageToken, followed with pageToken.
  expect(compute.some((r) => r.method === "compute.instances.aggregatedList" && r.path.includes("pageToken="))).toBe(true);
});

it("every answer the fake gave is the method's response schema in the document, or Google's error shape", async () => {
  // The round above need not meet every error, so ask for the three a shim sees most: an instance
  // that is not there (404), a name that is taken (409) and a start while stopping (400).
  const o = await operations();
  const zone = "us-central1-a";
  const instances = `projects/${project.id}/zones/${zone}/instances`;
  await project.seedInstance({ name: "contract-stopping", zone, status: "STOPPING" });
  const insert = {
    name: "contract-stopping",
    machineType: `zones/${zone}/machineTypes/e2-small`,
    disks: [{ boot: true, autoDelete: true, initializeParams: { sourceImage: "projects/debian-cloud/global/images/family/debian-12" } }],
  };
  const failed = [
    await o.gce.call({ method: "compute.instances.get", http: "GET", path: `${instances}/contract-missing` }),
    await o.gce.call({ method: "compute.instances.insert", http: "POST", path: instances, body: insert }),
    await o.gce.call({ method: "compute.instances.start", http: "POST", path: `${instances}/contract-stopping/start` }),
  ];
  expect(failed.map((a) => (a.ok ? "ok" : `${a.error.status} ${a.error.reason}`))).toEqual([
    "404 notFound",
    "409 alreadyExists",
    "400 resourceNotReady",
  ]);

  const seen = new Set<string>();
  for (const a of answers) {
    const matching = [...methods.values()].filter((m) => m.httpMethod === a.http && pathRegex(m).test(a.path));
    expect(
      matching.map((m) => m.id),
      `${a.http} ${a.path}`,
    ).toHaveLength(1);
    const m = matching[0]!;
    if (a.status === 200) {
      expect(problems(a.body, m.response), `${m.id} answered`).toEqual([]);
      seen.add(m.id);
    } else {
      expect(problems(a.body, GOOGLE_ERROR), `${m.id} answered ${a.status}`).toEqual([]);
      const error = (a.body as { error: { code: number; errors: { reason: string }[] } }).error;
      expect(error.code, `${m.id} answered ${a.status}`).toBe(a.status);
      expect(error.errors.length, `${m.id} answered ${a.status}`).toBeGreaterThan(0);
      seen.add(`${a.status} ${error.errors[0]!.reason}`);
    }
  }
  for (const expected of [
    "compute.instances.aggregatedList",
    "compute.instances.delete",
    "compute.instances.get",
    "compute.instances.insert",
    "compute.instances.start",
    "compute.instances.stop",
    "compute.machineTypes.list",
    "compute.zoneOperations.wait",
    "404 notFound",
    "409 alreadyExists",
    "400 resourceNotReady",
  ])
    expect(seen).toContain(expected);
});

it("the answer check fails on what breaks the document: an undeclared field, a wrong type, an int64 as a number, an unknown value, a schema not copied", () => {
  const instance = {
    kind: "compute#instance",
    id: 4242,
    name: "runner-1",
    status: "BOOTING",
    colour: "red",
    labels: { team: 7 },
    disks: [{ boot: "yes", diskSizeGb: "ten" }],
    scheduling: { provisioningModel: "SPOT", preemptible: false },
    guestAccelerators: [{ acceleratorCount: 1 }],
  };
  expect(problems(instance, { $ref: "Instance" })).toEqual([
    "$.id: not a string (uint64)",
    "$.status: BOOTING is not one of DEPROVISIONING, PROVISIONING, REPAIRING, RUNNING, STAGING, STOPPED, STOPPING, SUSPENDED, SUSPENDING, TERMINATED",
    "$.colour: not declared",
    "$.labels.team: not a string",
    "$.disks[0].boot: not a boolean",
    '$.disks[0].diskSizeGb: "ten" is not int64',
    "$.guestAccelerators[0]: schema AcceleratorConfig is not in the fixture",
  ]);
  expect(problems({ error: { code: 404, message: "gone", errors: [{ reason: "notFound" }] } }, GOOGLE_ERROR)).toEqual([
    "$.error.errors[0].domain: missing",
    "$.error.errors[0].message: missing",
  ]);
  expect(problems({ message: "not found" }, GOOGLE_ERROR)).toEqual(["$.error: missing", "$.message: not declared"]);
});
