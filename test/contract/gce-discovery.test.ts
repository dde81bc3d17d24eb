/**
 * The GCE shim's calls and the fake Compute Engine's answers against Google's discovery document
 * (a trimmed copy in test/fixtures/gce/compute-v1-trimmed.json, its source in its header): every
 * call the shim makes while creating (with a zone fallback), listing, getting, stopping,
 * starting and deleting is a method the document has, with its HTTP method, a path that fits the
 * method's path template and parameter patterns, only query parameters the method declares, and
 * a body exactly when the method takes one; the fake records each as that method.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { readServiceAccountKey } from "../../shims/gce/config.ts";
import { labelValue } from "../../shims/gce/extra-specs.ts";
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
const doc = JSON.parse(readFileSync(new URL("../fixtures/gce/compute-v1-trimmed.json", import.meta.url), "utf8")) as {
  resources: Record<string, { methods: Record<string, Method> }>;
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

let gce: FakeGce;
let project: FakeGceProject;
const calls: GceCall[] = [];
const POOL = "0f0c2a4e-8a4b-4f6e-9d55-2b8c1b1f5b1e";
const CONTROLLER = "5a3f8e1c-2b7d-4c1e-9f0a-6d4b3c2a1e0f";

beforeAll(async () => {
  gce = await startFakeGce();
  project = await createProject(gce.url, { config: { operation_ms: 5, boot_delay_ms: 10, stop_delay_ms: 10, page_size: 1 } });
});
afterAll(() => gce.stop());

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
