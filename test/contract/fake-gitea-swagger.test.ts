/**
 * The fake Gitea against Gitea's swagger, for every REST call Edgerunner makes to Gitea
 * (src/forges/gitea/gitea-runners.ts and gitea-hooks.ts): the operation exists in the trimmed
 * description (test/fixtures/gitea/swagger-trimmed.json, its header says where each part was
 * checked), the fake answers with a status the description lists, and its body has the shape the
 * description gives. The bodies we send are checked against the request schemas too.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGiteaWorld, type FakeGiteaWorld } from "../fake-gitea/control-client.ts";
import { type FakeGitea, startFakeGitea } from "../fake-gitea/server.ts";

type Schema = {
  $ref?: string;
  type?: string;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema;
  enum?: string[];
};
const spec = JSON.parse(readFileSync(new URL("../fixtures/gitea/swagger-trimmed.json", import.meta.url), "utf8")) as {
  paths: Record<string, Record<string, { responses: Record<string, { schema?: Schema }>; parameters?: { in: string; schema?: Schema }[] }>>;
  definitions: Record<string, Schema>;
};

/** Where `value` breaks `schema` (Swagger 2.0's subset the description uses); empty when it fits. */
function problems(value: unknown, schema: Schema, at = "$"): string[] {
  if (schema.$ref) return problems(value, spec.definitions[schema.$ref.replace("#/definitions/", "")]!, at);
  const out: string[] = [];
  switch (schema.type) {
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${at}: not an object`];
      const o = value as Record<string, unknown>;
      for (const r of schema.required ?? []) if (!(r in o)) out.push(`${at}.${r}: missing`);
      for (const [k, v] of Object.entries(o)) {
        const s = schema.properties?.[k] ?? schema.additionalProperties;
        if (s && v !== null) out.push(...problems(v, s, `${at}.${k}`));
      }
      return out;
    }
    case "array":
      if (!Array.isArray(value)) return [`${at}: not an array`];
      return value.flatMap((v, i) => problems(v, schema.items!, `${at}[${i}]`));
    case "string":
      if (typeof value !== "string") return [`${at}: not a string`];
      return schema.enum && !schema.enum.includes(value) ? [`${at}: ${value} not in ${schema.enum.join(",")}`] : [];
    case "integer":
      return Number.isInteger(value) ? [] : [`${at}: not an integer`];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${at}: not a boolean`];
    default:
      return [];
  }
}

const TOKEN = "contract-admin-token";
let fake: FakeGitea;
let world: FakeGiteaWorld;
const used = new Set<string>();

async function call(method: string, template: string, path: string, body?: unknown) {
  const op = spec.paths[template]?.[method.toLowerCase()];
  expect(op, `${method} ${template} is in Gitea's description`).toBeDefined();
  used.add(`${method} ${template}`);
  const requestSchema = op!.parameters?.find((p) => p.in === "body")?.schema;
  if (body !== undefined) {
    expect(requestSchema, `${method} ${template} takes a body`).toBeDefined();
    expect(problems(body, requestSchema!), `what we send to ${method} ${template}`).toEqual([]);
  }
  const res = await fetch(`${world.url}/api/v1${path}`, {
    method,
    headers: { authorization: `token ${TOKEN}`, ...(body !== undefined && { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  return { status: res.status, data, op: op! };
}

/** The answer's status is one the description lists, and a 2xx body fits its schema. */
function conforms(r: Awaited<ReturnType<typeof call>>, status: number) {
  expect(r.status).toBe(status);
  const answer = r.op.responses[String(status)];
  expect(answer, `status ${status} is documented`).toBeDefined();
  if (answer!.schema) expect(problems(r.data, answer!.schema)).toEqual([]);
}

// The bodies src/forges/gitea/gitea-hooks.ts sends (installGiteaHook), with a placeholder secret.
const hookConfig = { url: "https://edgerunner.example/webhooks/gitea", content_type: "json", http_method: "post", secret: "s" };
const createHook = { type: "gitea", config: hookConfig, events: ["workflow_job"], active: true, branch_filter: "*" };
const editHook = { config: hookConfig, events: ["workflow_job"], active: true };

beforeAll(async () => {
  fake = await startFakeGitea();
  world = await createGiteaWorld(fake.url);
  await world.seed({ repos: ["octo/app"], orgs: ["octo"], tokens: [{ token: TOKEN, login: "admin", admin: true }] });
});
afterAll(() => fake.close());

describe("the fake Gitea speaks Gitea's REST API as described", () => {
  for (const [prefix, scope] of [
    ["/repos/{owner}/{repo}", "/repos/octo/app"],
    ["/orgs/{org}", "/orgs/octo"],
    ["/admin", "/admin"],
  ] as const) {
    it(`runners and hooks at ${prefix}`, async () => {
      conforms(await call("POST", `${prefix}/actions/runners/registration-token`, `${scope}/actions/runners/registration-token`), 200);
      await world.seed({ runners: [{ name: `r-${scope}`, scope: scope.slice(1), labels: ["ubuntu-latest"] }] });
      const list = await call("GET", `${prefix}/actions/runners`, `${scope}/actions/runners?page=1&limit=50`);
      conforms(list, 200);
      const id = (list.data.runners as { id: number; name: string }[]).find((r) => r.name === `r-${scope}`)!.id;
      conforms(await call("GET", `${prefix}/actions/runners/{runner_id}`, `${scope}/actions/runners/${id}`), 200);
      conforms(await call("DELETE", `${prefix}/actions/runners/{runner_id}`, `${scope}/actions/runners/${id}`), 204);
      conforms(await call("GET", `${prefix}/actions/runners/{runner_id}`, `${scope}/actions/runners/${id}`), 404);
      // Gitea 1.24 answers 500 for a runner it does not have (undocumented; GARM works around it too): the fake does as Gitea does.
      expect((await call("DELETE", `${prefix}/actions/runners/{runner_id}`, `${scope}/actions/runners/${id}`)).status).toBe(500);

      const created = await call("POST", `${prefix}/hooks`, `${scope}/hooks`, createHook);
      conforms(created, 201);
      expect(created.data.config.secret).toBeUndefined();
      conforms(await call("GET", `${prefix}/hooks`, `${scope}/hooks?page=1&limit=50`), 200);
      conforms(await call("PATCH", `${prefix}/hooks/{id}`, `${scope}/hooks/${created.data.id}`, editHook), 200);
      conforms(await call("DELETE", `${prefix}/hooks/{id}`, `${scope}/hooks/${created.data.id}`), 204);
    });
  }

  it("a workflow job", async () => {
    const [job] = await world.queueJobs("octo/app", ["ubuntu-latest"]);
    conforms(await call("GET", "/repos/{owner}/{repo}/actions/jobs/{job_id}", `/repos/octo/app/actions/jobs/${job!.id}`), 200);
    conforms(await call("GET", "/repos/{owner}/{repo}/actions/jobs/{job_id}", "/repos/octo/app/actions/jobs/999999"), 404);
  });

  it("covers every operation the description lists", () => {
    const listed = Object.entries(spec.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect([...used].sort()).toEqual(listed.sort());
  });
});
