/**
 * The fake Gitea against Gitea's swagger, for every REST call Edgerunner makes to Gitea
 * (src/forges/gitea/gitea-runners.ts and gitea-hooks.ts) and the reads a backstop makes to find
 * queued jobs whose webhooks were lost (a repository's jobs by status, an organization's
 * repositories): the operation exists in the trimmed
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
  return { status: res.status, data, op: op!, headers: res.headers };
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

  it("a repository's jobs by status, paged; an organization's repositories", async () => {
    await world.seed({ repos: ["octo/jobs", "octo/zeta"] });
    const [a, b, c, d] = (await world.queueJobs("octo/jobs", ["gpu"], 4)).map((j) => j.id);
    // An act_runner takes two of them and fails the first.
    const { token } = (await (
      await fetch(`${world.url}/api/v1/repos/octo/jobs/actions/runners/registration-token`, {
        method: "POST",
        headers: { authorization: `token ${TOKEN}` },
      })
    ).json()) as { token: string };
    const { runner } = (await (await world.runnerCall("Register", { token, name: "r-jobs", labels: ["gpu"] })).json()) as {
      runner: { uuid: string; token: string };
    };
    const fetched = async () => ((await (await world.runnerCall("FetchTask", {}, runner)).json()) as { task: { id: number } }).task.id;
    expect(await fetched()).toBe(a);
    expect((await world.runnerCall("UpdateTask", { state: { id: a, result: "RESULT_FAILURE" } }, runner)).status).toBe(200);
    expect(await fetched()).toBe(b);

    const jobs = async (query: string, status = 200) => {
      const r = await call("GET", "/repos/{owner}/{repo}/actions/jobs", `/repos/octo/jobs/actions/jobs${query}`);
      conforms(r, status);
      return r;
    };
    const ids = (r: Awaited<ReturnType<typeof call>>) => (r.data.jobs as { id: number }[]).map((j) => j.id);
    const everything = await jobs("");
    expect([ids(everything), everything.data.total_count]).toEqual([[a, b, c, d], 4]);
    for (const [status, want] of [
      ["queued", [c, d]],
      ["in_progress", [b]],
      ["completed", [a]],
      ["failure", [a]],
      ["success", []],
      ["waiting", []],
    ] as const) {
      expect([status, ids(await jobs(`?status=${status}`))]).toEqual([status, want]);
    }
    expect((await jobs("?status=completed")).data.jobs[0]).toMatchObject({ status: "completed", conclusion: "failure" });
    expect(ids(await jobs("?status=queued&status=in_progress"))).toEqual([b, c, d]);
    const first = await jobs("?status=queued&page=1&limit=1");
    expect([ids(first), first.data.total_count, first.headers.get("x-total-count")]).toEqual([[c], 2, "2"]);
    expect(first.headers.get("link")).toMatch(/page=2&limit=1>; rel="next"/);
    expect(ids(await jobs("?status=queued&page=2&limit=1"))).toEqual([d]);
    expect((await jobs("?status=not-a-status", 400)).data.message).toBe("Invalid status not-a-status");
    conforms(await call("GET", "/repos/{owner}/{repo}/actions/jobs", "/repos/octo/missing/actions/jobs"), 404);

    const repos = async (path: string, status = 200) => {
      const r = await call("GET", "/orgs/{org}/repos", path);
      conforms(r, status);
      return r;
    };
    const all = await repos("/orgs/octo/repos?page=1&limit=50");
    expect((all.data as { full_name: string }[]).map((r) => r.full_name)).toEqual(["octo/app", "octo/jobs", "octo/zeta"]);
    const byName = Object.fromEntries((all.data as { name: string; updated_at: string }[]).map((r) => [r.name, Date.parse(r.updated_at)]));
    expect(byName.jobs).toBeGreaterThanOrEqual(byName.zeta!);
    const paged = await repos("/orgs/octo/repos?page=1&limit=2");
    expect([paged.data.length, paged.headers.get("x-total-count")]).toEqual([2, "3"]);
    expect(paged.headers.get("link")).toMatch(/rel="next"/);
    await repos("/orgs/nobody/repos", 404);
  });

  it("covers every operation the description lists", () => {
    const listed = Object.entries(spec.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect([...used].sort()).toEqual(listed.sort());
  });
});
