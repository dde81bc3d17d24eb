/**
 * The fake GitHub must answer the way GitHub documents: every REST operation it implements is
 * driven here and each answer is validated against GitHub's published OpenAPI description
 * (npm @octokit/openapi; the GHEC file, which is api.github.com plus the enterprise APIs).
 * A new fake route without a validated success answer fails the coverage check at the end.
 * Over the house's ~400 lines on purpose: that check needs every operation's case in this one file.
 */

import { createSign, generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import Ajv, { type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_PERMISSIONS } from "../fake-github/apps/permissions.ts";
import { createWorld, type FakeWorld } from "../fake-github/control-client.ts";
import { type FakeGithub, startFakeGithub } from "../fake-github/server.ts";
import { FAKE_OPERATIONS } from "../fake-github/world.ts";

type Spec = { paths: Record<string, Record<string, { responses?: Record<string, any>; requestBody?: any }>> };

const require = createRequire(import.meta.url);
const specPath = require.resolve("@octokit/openapi/generated/ghec.deref.json");

let spec: Spec;
let fake: FakeGithub;
let world: FakeWorld;
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
const compiled = new Map<object, ValidateFunction>();
const validated = new Set<string>();

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const APP_ID = 99;

function appJwt(appId = APP_ID, key: Parameters<ReturnType<typeof createSign>["sign"]>[0] = privateKey): string {
  const now = Math.floor(Date.now() / 1000);
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const input = `${enc({ alg: "RS256", typ: "JWT" })}.${enc({ iat: now - 60, exp: now + 540, iss: String(appId) })}`;
  return `${input}.${createSign("RSA-SHA256").update(input).sign(key).toString("base64url")}`;
}

/** The spec's path template for a concrete path: literal segments win over parameters. */
function templateFor(path: string): string | null {
  const segs = path.split("/");
  let best: { t: string; literals: number } | null = null;
  for (const t of Object.keys(spec.paths)) {
    const ts = t.split("/");
    if (ts.length !== segs.length) continue;
    let literals = 0;
    let ok = true;
    for (let i = 0; i < ts.length && ok; i++) {
      if (/^\{.+\}$/.test(ts[i]!)) continue;
      if (ts[i] === segs[i]) literals++;
      else ok = false;
    }
    if (ok && (!best || literals > best.literals)) best = { t, literals };
  }
  return best?.t ?? null;
}

/**
 * OpenAPI 3.0 `nullable: true` also allows null where an `enum` lists the values; JSON Schema
 * (ajv) needs null in the enum itself. And beside `allOf` with no `type` of its own (an
 * installation's `account`), ajv refuses `nullable` outright: there it becomes "that, or null".
 * That `account` of GET /app/installations is also `allOf` a user and an enterprise, which no
 * account is (GitHub's own example of the operation, `base-installation-items`, is a plain user):
 * it means either, as in the `installation` schema (`anyOf`).
 */
function nullableEnums(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(nullableEnums);
    return;
  }
  if (!node || typeof node !== "object") return;
  const o = node as Record<string, unknown>;
  if (o.nullable === true && Array.isArray(o.enum) && !o.enum.includes(null)) o.enum = [...o.enum, null];
  const titles = Array.isArray(o.allOf) ? (o.allOf as { title?: string }[]).map((x) => x.title).join() : "";
  if (titles === "Simple User,Enterprise") {
    o.anyOf = o.allOf;
    delete o.allOf;
  }
  if (o.nullable === true && o.type === undefined) {
    const { nullable: _, ...rest } = o;
    for (const k of Object.keys(o)) delete o[k];
    o.anyOf = [rest, { type: "null" }];
  }
  for (const v of Object.values(o)) nullableEnums(v);
}

function validator(schema: object): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    nullableEnums(schema);
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** Calls the fake and checks the answer against the spec; returns it. */
async function call(
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; query?: string; operation?: string; anonymous?: boolean; in?: FakeWorld } = {},
): Promise<Answer> {
  const res = await fetch(`${(opts.in ?? world).url}${path}${opts.query ? `?${opts.query}` : ""}`, {
    method,
    headers: {
      ...(!opts.anonymous && { authorization: `Bearer ${opts.token ?? "ghp_contract"}` }),
      accept: "application/vnd.github+json",
      "x-github-api-version": "2022-11-28",
      ...(opts.body !== undefined && { "content-type": "application/json" }),
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  const body = text ? JSON.parse(text) : null;
  const template = templateFor(path);
  expect(template, `no OpenAPI path for ${path}`).not.toBeNull();
  const op = spec.paths[template!]![method.toLowerCase()];
  expect(op, `OpenAPI has no ${method} ${template}`).toBeDefined();
  const documented = op!.responses?.[String(res.status)];
  if (documented) {
    const schema = documented.content?.["application/json"]?.schema;
    if (schema) {
      const v = validator(schema);
      const ok = v(body);
      expect(ok, `${method} ${template} ${res.status}: ${ajv.errorsText(v.errors)}\n${text.slice(0, 500)}`).toBe(true);
    } else {
      expect(text, `${method} ${template} ${res.status} has no documented body`).toBe("");
    }
  } else {
    // GitHub does not document every error status per operation; they all use basic-error.
    expect(res.status, `${method} ${template} answered undocumented ${res.status}`).toBeGreaterThanOrEqual(400);
    expect(body).toMatchObject({ message: expect.any(String), documentation_url: expect.any(String) });
  }
  if (res.status < 300) {
    const fakeOp = FAKE_OPERATIONS.find((o) => o.method === method && o.pattern.test(path));
    if (fakeOp) validated.add(fakeOp.operation);
  }
  return { status: res.status, body, headers: res.headers };
}

/** The request bodies Edgerunner sends must be ones GitHub documents. */
function expectValidRequest(method: string, template: string, body: unknown) {
  const schema = spec.paths[template]![method.toLowerCase()]!.requestBody?.content?.["application/json"]?.schema;
  expect(schema).toBeDefined();
  const v = validator(schema);
  expect(v(body), ajv.errorsText(v.errors)).toBe(true);
}

beforeAll(async () => {
  spec = JSON.parse(readFileSync(specPath, "utf8")) as Spec;
  fake = await startFakeGithub();
  world = await createWorld(fake.url);
  await world.seed({
    repos: ["octo/app"],
    orgs: ["octo"],
    enterprises: ["acme"],
    pats: [{ token: "ghp_contract" }],
    apps: [{ id: APP_ID, public_key: publicKey.export({ type: "spki", format: "pem" }).toString() }],
    installations: [{ id: 5, app_id: APP_ID, account: "octo" }],
    runner_groups: { "orgs/octo": [{ id: 7, name: "gpu" }], "enterprises/acme": [{ id: 8, name: "big" }] },
    jobs: [
      { id: 1, repository: "octo/app", status: "queued" },
      { id: 2, repository: "octo/app", status: "completed", conclusion: "failure", runner_id: 3, runner_name: "r-3" },
    ],
  });
}, 60_000);

afterAll(async () => {
  await fake?.close();
});

describe("fake GitHub answers as GitHub's OpenAPI documents", () => {
  it("mints installation tokens for a valid App JWT", async () => {
    const res = await call("POST", "/app/installations/5/access_tokens", { token: appJwt() });
    expect(res.status).toBe(201);
    const installationToken = res.body.token as string;
    const list = await call("GET", "/orgs/octo/actions/runners", { token: installationToken });
    expect(list.status).toBe(200);
    expect((await call("POST", "/app/installations/6/access_tokens", { token: appJwt() })).status).toBe(404);
    expect((await call("POST", "/app/installations/5/access_tokens", { token: "ghp_contract" })).status).toBe(401);
  });

  it.each(["/repos/octo/app", "/orgs/octo", "/enterprises/acme"])("runner endpoints under %s", async (p) => {
    const group = p.startsWith("/orgs") ? 7 : p.startsWith("/enterprises") ? 8 : 1;
    const jitBody = {
      name: `jit${p.replaceAll("/", "-")}`,
      runner_group_id: group,
      labels: ["self-hosted", "linux"],
      work_folder: "_work",
    };
    const template = templateFor(`${p}/actions/runners/generate-jitconfig`)!;
    expectValidRequest("POST", template, jitBody);
    const jit = await call("POST", `${p}/actions/runners/generate-jitconfig`, { body: jitBody });
    expect(jit.status).toBe(201);
    expect((await call("POST", `${p}/actions/runners/generate-jitconfig`, { body: jitBody })).status).toBe(409);
    expect((await call("POST", `${p}/actions/runners/generate-jitconfig`, { body: { ...jitBody, name: "x", labels: [] } })).status).toBe(
      422,
    );

    for (let i = 0; i < 4; i++) await call("POST", `${p}/actions/runners/generate-jitconfig`, { body: { ...jitBody, name: `more-${i}` } });
    const page1 = await call("GET", `${p}/actions/runners`, { query: "per_page=2" });
    expect(page1.body.total_count).toBe(5);
    expect(page1.headers.get("link")).toMatch(/rel="next"/);
    const byName = await call("GET", `${p}/actions/runners`, { query: `name=${jitBody.name}` });
    expect(byName.body.runners).toHaveLength(1);
    // The name filter finds nothing for a name no runner has (an empty list, not a 404).
    const noName = await call("GET", `${p}/actions/runners`, { query: "name=nobody-has-this" });
    expect([noName.status, noName.body.total_count, noName.body.runners]).toEqual([200, 0, []]);

    const id = jit.body.runner.id as number;
    expect((await call("GET", `${p}/actions/runners/${id}`)).status).toBe(200);
    await world.updateRunner(id, { busy: true, status: "online" });
    expect((await call("DELETE", `${p}/actions/runners/${id}`)).status).toBe(422);
    await world.updateRunner(id, { busy: false });
    expect((await call("DELETE", `${p}/actions/runners/${id}`)).status).toBe(204);
    expect((await call("DELETE", `${p}/actions/runners/${id}`)).status).toBe(404);
    expect((await call("GET", `${p}/actions/runners/${id}`)).status).toBe(404);

    expect((await call("POST", `${p}/actions/runners/registration-token`)).status).toBe(201);
    // A package the world serves itself is listed in GitHub's shape too (with a temp download token).
    await world.addRunnerDownload({
      os: "linux",
      architecture: "x64",
      filename: "actions-runner-linux-x64-9.9.9.tar.gz",
      content_base64: btoa("pkg"),
    });
    const dl = await call("GET", `${p}/actions/runners/downloads`);
    expect(dl.body.length).toBeGreaterThan(3);
    expect(dl.body.find((d: any) => d.os === "linux" && d.architecture === "x64")).toMatchObject({
      filename: "actions-runner-linux-x64-9.9.9.tar.gz",
      temp_download_token: expect.any(String),
      sha256_checksum: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const rl = page1.headers;
    for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-used", "x-ratelimit-reset", "x-ratelimit-resource"]) {
      expect(rl.get(h), h).toMatch(/\S/);
    }
  });

  it.each(["/orgs/octo", "/enterprises/acme"])("runner groups under %s", async (p) => {
    const res = await call("GET", `${p}/actions/runner-groups`);
    expect(res.body.runner_groups.map((g: { name: string }) => g.name)).toContain("Default");
  });

  it("jobs", async () => {
    expect((await call("GET", "/repos/octo/app/actions/jobs/1")).body.status).toBe("queued");
    expect((await call("GET", "/repos/octo/app/actions/jobs/2")).body).toMatchObject({ conclusion: "failure", runner_name: "r-3" });
    expect((await call("GET", "/repos/octo/app/actions/jobs/3")).status).toBe(404);
  });

  it.each(["/repos/octo/app", "/orgs/octo"])("hooks under %s", async (p) => {
    const body = {
      name: "web",
      config: { url: "https://edgerunner.example.com/webhooks/github", content_type: "json", secret: "s3cret-hook", insecure_ssl: "0" },
      events: ["workflow_job"],
      active: true,
    };
    expectValidRequest("POST", templateFor(`${p}/hooks`)!, body);
    const created = await call("POST", `${p}/hooks`, { body });
    expect(created.status).toBe(201);
    expect(created.body.config.secret).not.toBe("s3cret-hook");
    expect((await call("POST", `${p}/hooks`, { body })).status).toBe(422);
    expect((await call("GET", `${p}/hooks`)).body).toHaveLength(1);
    const id = created.body.id as number;
    expect((await call("GET", `${p}/hooks/${id}`)).status).toBe(200);
    const patch = { config: body.config, events: ["workflow_job"], active: true };
    expectValidRequest("PATCH", templateFor(`${p}/hooks/${id}`)!, patch);
    expect((await call("PATCH", `${p}/hooks/${id}`, { body: patch })).status).toBe(200);
    expect((await call("DELETE", `${p}/hooks/${id}`)).status).toBe(204);
    expect((await call("GET", `${p}/hooks/${id}`)).status).toBe(404);
  });

  it("what the setup check reads: an installation, the App's webhook, a hook's deliveries", async () => {
    const url = "https://edgerunner.example.com/webhooks/github";
    await world.seed({
      orgs: ["deliv"],
      repos: ["deliv/app"],
      installations: [{ id: 6, app_id: APP_ID, account: "deliv", permissions: { organization_self_hosted_runners: "write" }, events: [] }],
      hooks: [
        { scope: "repos/deliv/app", url, events: ["workflow_job"], deliveries: [{ status_code: 200 }, { status_code: 401 }] },
        { scope: "orgs/deliv", url, events: ["workflow_job"], deliveries: [{ status_code: 0 }] },
      ],
      app_hooks: [{ app_id: APP_ID, url, deliveries: [{ status_code: 202, event: "workflow_job" }] }],
    });
    const inst = await call("GET", "/app/installations/6", { token: appJwt() });
    expect(inst.body).toMatchObject({ id: 6, app_id: APP_ID, permissions: { organization_self_hosted_runners: "write" }, events: [] });
    expect((await call("GET", "/app/installations/5", { token: appJwt() })).body.permissions).toMatchObject({ administration: "write" });
    expect((await call("GET", "/app/installations/404", { token: appJwt() })).status).toBe(404);
    expect((await call("GET", "/app/hook/config", { token: appJwt() })).body).toEqual({ url, content_type: "json", insecure_ssl: "0" });
    const appDeliveries = await call("GET", "/app/hook/deliveries", { token: appJwt(), query: "per_page=5" });
    expect(appDeliveries.body.map((d: { status_code: number }) => d.status_code)).toEqual([202]);
    for (const scope of ["/repos/deliv/app", "/orgs/deliv"]) {
      const [hook] = (await call("GET", `${scope}/hooks`)).body as { id: number }[];
      const deliveries = await call("GET", `${scope}/hooks/${hook!.id}/deliveries`, { query: "per_page=10" });
      expect(deliveries.body.length).toBeGreaterThan(0);
      expect((await call("GET", `${scope}/hooks/999999/deliveries`)).status).toBe(404);
    }
  });

  /** Every page of a list, following the Link header's rel="next" to the end (each page checked by `call`). */
  async function allPages(path: string, query: string, opts: { token?: string } = {}): Promise<Answer[]> {
    const pages = [await call("GET", path, { ...opts, query })];
    const worldPath = new URL(world.url).pathname;
    for (;;) {
      const next = /<([^>]+)>; rel="next"/.exec(pages.at(-1)!.headers.get("link") ?? "");
      if (!next) return pages;
      const url = new URL(next[1]!);
      expect(url.pathname.slice(worldPath.length)).toBe(path);
      pages.push(await call("GET", path, { ...opts, query: url.search.slice(1) }));
      expect(pages.length).toBeLessThan(20);
    }
  }

  it("workflow runs: made from the jobs, newest first, filtered by status and created, paged to the end; a run's jobs", async () => {
    const t0 = Date.parse("2024-05-01T10:00:00Z");
    await world.seed({
      repos: ["runs/app", "runs/other"],
      orgs: ["runs"],
      installations: [
        { id: 17, app_id: APP_ID, account: "runs", permissions: { metadata: "read" } },
        { id: 18, app_id: APP_ID, account: "runs", permissions: { actions: "read", metadata: "read" } },
      ],
    });
    await world.putJobs(
      { id: 501, repository: "runs/app", run_id: 50, status: "queued", queued_at: t0 },
      { id: 502, repository: "runs/app", run_id: 50, status: "queued", queued_at: t0 },
      { id: 511, repository: "runs/app", run_id: 51, status: "in_progress", runner_id: 9, runner_name: "r-9", queued_at: t0 + 60_000 },
      { id: 512, repository: "runs/app", run_id: 51, status: "queued", queued_at: t0 + 60_000 },
      { id: 521, repository: "runs/app", run_id: 52, status: "completed", conclusion: "success", queued_at: t0 + 120_000 },
      { id: 522, repository: "runs/app", run_id: 52, status: "completed", conclusion: "failure", queued_at: t0 + 120_000 },
      { id: 541, repository: "runs/app", run_id: 54, status: "completed", conclusion: "failure", queued_at: t0 + 180_000 },
      { id: 542, repository: "runs/app", run_id: 54, status: "queued", queued_at: t0 + 240_000, run_attempt: 2 },
      { id: 531, repository: "runs/other", run_id: 53, status: "queued", queued_at: t0 },
    );
    const runs = "/repos/runs/app/actions/runs";
    const ids = (a: Answer) => (a.body.workflow_runs as { id: number }[]).map((r) => r.id);

    const all = await call("GET", runs);
    expect([all.body.total_count, ids(all)]).toEqual([4, [54, 52, 51, 50]]);
    // A re-run shows its latest attempt; its run keeps the time it was first queued.
    expect(all.body.workflow_runs[0]).toMatchObject({
      status: "queued",
      run_attempt: 2,
      run_number: 4,
      created_at: "2024-05-01T10:03:00Z",
      run_started_at: "2024-05-01T10:04:00Z",
    });
    expect(all.headers.get("link")).toBeNull();
    for (const [status, want] of [
      ["queued", [54, 50]],
      ["in_progress", [51]],
      ["completed", [52]],
      ["failure", [52]],
      ["success", []],
      ["not-a-status", []],
    ] as const) {
      const res = await call("GET", runs, { query: `status=${status}` });
      expect([status, ids(res)]).toEqual([status, want]);
    }
    expect((await call("GET", runs, { query: "status=completed" })).body.workflow_runs[0].conclusion).toBe("failure");
    const created = (q: string) => call("GET", runs, { query: `created=${encodeURIComponent(q)}` });
    expect(ids(await created(">=2024-05-01T10:01:00Z"))).toEqual([54, 52, 51]);
    expect(ids(await created("<2024-05-01T10:01:00Z"))).toEqual([50]);
    expect(ids(await created("2024-05-01T10:01:00Z..2024-05-01T10:02:00Z"))).toEqual([52, 51]);
    expect(ids(await created("2024-05-01"))).toEqual([54, 52, 51, 50]);
    expect(ids(await created(">=2024-05-02T00:00:00Z"))).toEqual([]);

    const pages = await allPages(runs, "per_page=1");
    expect(pages.map(ids)).toEqual([[54], [52], [51], [50]]);
    expect(pages.map((p) => p.body.total_count)).toEqual([4, 4, 4, 4]);
    const queuedPages = await allPages(runs, "status=queued&per_page=1");
    expect(queuedPages.map(ids)).toEqual([[54], [50]]);

    const jobs = await call("GET", `${runs}/51/jobs`);
    expect(jobs.body.total_count).toBe(2);
    const job511 = (jobs.body.jobs as { id: number }[]).find((j) => j.id === 511);
    expect(job511).toEqual((await call("GET", "/repos/runs/app/actions/jobs/511")).body);
    const jobIds = (a: Answer) => (a.body.jobs as { id: number }[]).map((j) => j.id);
    expect(jobIds(await call("GET", `${runs}/54/jobs`))).toEqual([542]);
    expect(jobIds(await call("GET", `${runs}/54/jobs`, { query: "filter=all" }))).toEqual([541, 542]);
    expect((await allPages(`${runs}/50/jobs`, "per_page=1")).map(jobIds)).toEqual([[501], [502]]);
    expect((await call("GET", `${runs}/53/jobs`)).status).toBe(404);
    expect((await call("GET", `${runs}/999/jobs`)).status).toBe(404);
    expect((await call("GET", "/repos/runs/missing/actions/runs")).status).toBe(404);

    // An installation needs the actions permission; an App's own JWT is not a token for these.
    const token = async (id: number) =>
      (await call("POST", `/app/installations/${id}/access_tokens`, { token: appJwt() })).body.token as string;
    const without = await token(17);
    expect((await call("GET", runs, { token: without })).status).toBe(403);
    expect((await call("GET", `${runs}/51/jobs`, { token: without })).status).toBe(403);
    const withActions = await token(18);
    expect((await call("GET", runs, { token: withActions })).body.total_count).toBe(4);
    expect((await call("GET", `${runs}/51/jobs`, { token: withActions })).status).toBe(200);
    expect((await call("GET", runs, { token: appJwt() })).status).toBe(401);
  });

  it("an organization's repositories: sorted by when they were last pushed to (a job queued), paged", async () => {
    await world.seed({ repos: ["pushes/app", "pushes/other", "pushes/quiet"], orgs: ["pushes"] });
    await world.putJobs({ id: 601, repository: "pushes/app", status: "queued", queued_at: Date.parse("2024-05-01T10:00:00Z") });
    const repos = "/orgs/pushes/repos";
    const names = (a: Answer) => (a.body as { full_name: string }[]).map((r) => r.full_name);

    const before = await call("GET", repos, { query: "sort=pushed" });
    expect(names(before)).toEqual(["pushes/other", "pushes/quiet", "pushes/app"]);
    expect(before.body[2].pushed_at).toBe("2024-05-01T10:00:00Z");
    await world.queueJobs({ repository: "pushes/quiet", labels: ["self-hosted"] });
    const after = await call("GET", repos, { query: "sort=pushed" });
    expect(names(after)).toEqual(["pushes/quiet", "pushes/other", "pushes/app"]);
    expect(Date.parse(after.body[0].pushed_at)).toBeGreaterThanOrEqual(Date.parse(after.body[1].pushed_at));
    expect(names(await call("GET", repos, { query: "sort=pushed&direction=asc" }))).toEqual(["pushes/app", "pushes/other", "pushes/quiet"]);
    expect(names(await call("GET", repos, { query: "sort=full_name" }))).toEqual(["pushes/app", "pushes/other", "pushes/quiet"]);
    expect(names(await call("GET", repos, { query: "type=public" }))).toEqual([]);
    const pages = await allPages(repos, "sort=pushed&per_page=2");
    expect(pages.map(names)).toEqual([["pushes/quiet", "pushes/other"], ["pushes/app"]]);
    expect((await call("GET", "/orgs/nobody/repos")).status).toBe(404);
  });

  it("the organizations, paged by `since`", async () => {
    await world.seed({ orgs: ["since-a", "since-b"], enterprise_orgs: { acme: ["since-a", "Since-B"] } });
    const all = await call("GET", "/organizations");
    const logins = (all.body as { login: string }[]).map((o) => o.login);
    expect(logins).toEqual(expect.arrayContaining(["octo", "since-a", "since-b"]));
    const ids = (all.body as { id: number }[]).map((o) => o.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const pages = await allPages("/organizations", "per_page=1");
    expect(pages.map((p) => p.body[0].login)).toEqual(logins);
    expect((await call("GET", "/organizations", { query: `since=${ids.at(-1)}` })).body).toEqual([]);
    expect((await call("GET", "/organizations", { token: appJwt() })).status).toBe(401);
  });

  it("errors and faults look like GitHub's", async () => {
    expect((await call("GET", "/repos/octo/app/actions/runners", { token: "ghp_wrong" })).status).toBe(401);
    await world.fault({ kind: "rate_limit", status: 403, retry_after: 5 });
    const secondary = await call("GET", "/repos/octo/app/actions/runners");
    expect(secondary.status).toBe(403);
    expect(secondary.headers.get("retry-after")).toBe("5");
    await world.fault({ kind: "rate_limit", status: 429, reset_in: 30 });
    const primary = await call("GET", "/repos/octo/app/actions/runners");
    expect(primary.status).toBe(429);
    expect(primary.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(primary.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000 + 20);
  });

  it("a GitHub App made by manifest: its conversion, the App, its installations, an installation's repositories", async () => {
    const form = (url: string, fields: Record<string, string>) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString(),
        redirect: "manual",
      });
    const manifest = {
      url: "https://edgerunner.example.com",
      hook_attributes: { url: "https://edgerunner.example.com/webhooks/github", active: false },
      redirect_url: "https://edgerunner.example.com/created",
      default_permissions: { actions: "read", administration: "write", organization_self_hosted_runners: "write" },
      default_events: ["workflow_job"],
    };
    const created = await form(`${world.url}/organizations/octo/settings/apps/new?state=s`, {
      manifest: JSON.stringify(manifest),
      confirm: "1",
      name: "Contract App",
    });
    const code = new URL(created.headers.get("location")!).searchParams.get("code")!;
    const conversion = await call("POST", `/app-manifests/${code}/conversions`, { anonymous: true });
    expect(conversion.status).toBe(201);
    expect(conversion.body.webhook_secret).toBeNull();
    expect((await call("POST", `/app-manifests/${code}/conversions`, { anonymous: true })).status).toBe(404);

    const app = conversion.body as { id: number; slug: string; pem: string };
    const jwt = appJwt(app.id, app.pem);
    expect((await call("GET", "/app", { token: jwt })).body.slug).toBe("contract-app");
    const page = await (await fetch(`${world.url}/apps/${app.slug}/installations/new`)).text();
    const targetId = /name="target_id" value="(\d+)"/.exec(page)![1]!;
    expect((await form(`${world.url}/apps/${app.slug}/installations`, { target_id: targetId, repository_selection: "all" })).status).toBe(
      302,
    );
    const [installation] = (await call("GET", "/app/installations", { token: jwt })).body as { id: number }[];
    const token = (await call("POST", `/app/installations/${installation!.id}/access_tokens`, { token: jwt })).body.token as string;
    const repos = await call("GET", "/installation/repositories", { token });
    expect(repos.body.repositories.map((r: { full_name: string }) => r.full_name)).toEqual(["octo/app"]);

    // A seeded App answers in the same shapes.
    expect((await call("GET", "/app", { token: appJwt() })).status).toBe(200);
    expect((await call("GET", "/app/installations", { token: appJwt() })).body.map((i: { id: number }) => i.id)).toContain(5);
  });

  it("knows GitHub's App permissions and their levels (the manifest check uses them)", () => {
    const schema =
      spec.paths["/app/installations/{installation_id}"]!.get!.responses!["200"].content["application/json"].schema.properties.permissions;
    const documented = Object.fromEntries(
      Object.entries(schema.properties as Record<string, { enum: string[] }>).map(([k, v]) => [k, v.enum]),
    );
    // GHEC's enterprise-owned Apps have three more; GitHub App manifests are not available for those.
    const enterpriseOnly = [
      "enterprise_administration",
      "enterprise_organization_installations",
      "enterprise_organization_installation_repositories",
    ];
    for (const k of enterpriseOnly) delete documented[k];
    expect(APP_PERMISSIONS).toEqual(documented);
  });

  it("webhook deliveries: listed by cursor and status, one with its request, redelivered (repository, organization and App hooks)", async () => {
    // A world of its own, whose receiver refuses jobs named fail-*.
    const receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => res.writeHead(JSON.parse(body).workflow_job.name.startsWith("fail-") ? 500 : 200).end());
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/github`;
    try {
      const dw = await createWorld(fake.url);
      await dw.seed({
        repos: ["dlv/app"],
        orgs: ["dlv"],
        pats: [{ token: "ghp_contract" }],
        apps: [{ id: APP_ID, public_key: publicKey.export({ type: "spki", format: "pem" }).toString() }],
        installations: [{ id: 50, app_id: APP_ID, account: "dlv" }],
      });
      const { hook_id: repoHook } = await dw.deliverWebhooksTo({ url, secret: "s3cret-hook", scope: "repos/dlv/app" });
      const orgBody = { name: "web", config: { url: `${url}?org`, content_type: "json" }, events: ["workflow_job"], active: true };
      const orgHook = (await call("POST", "/orgs/dlv/hooks", { body: orgBody, in: dw })).body.id as number;
      for (const name of ["ok-1", "fail-2", "ok-3", "fail-4", "ok-5"])
        await dw.queueJobs({ repository: "dlv/app", labels: ["self-hosted"], name });
      await dw.settleDeliveries();

      for (const base of [`/repos/dlv/app/hooks/${repoHook}/deliveries`, `/orgs/dlv/hooks/${orgHook}/deliveries`]) {
        // Every page validated, the Link followed to the end: each delivery once, newest first.
        const ids: number[] = [];
        let query: string | undefined = "per_page=2";
        while (query !== undefined) {
          const page: Answer = await call("GET", base, { query, in: dw });
          ids.push(...page.body.map((d: { id: number }) => d.id));
          const next = /<([^>]+)>; rel="next"/.exec(page.headers.get("link") ?? "")?.[1];
          if (next) expect(next.startsWith(`${dw.url}${base}?`)).toBe(true);
          query = next ? new URL(next).search.slice(1) : undefined;
        }
        expect(ids).toHaveLength(5);
        expect(ids).toEqual([...ids].sort((a, b) => b - a));

        const failed = await call("GET", base, { query: "status=failure&per_page=1", in: dw });
        expect(failed.body.map((d: { status_code: number }) => d.status_code)).toEqual([500]);
        expect(failed.headers.get("link")).toMatch(/status=failure>; rel="next"$/);
        const bad = await call("GET", base, { query: "cursor=%%%", in: dw });
        expect([400, 422]).toContain(bad.status);

        const one = await call("GET", `${base}/${failed.body[0].id}`, { in: dw });
        expect(one.body.request.payload.workflow_job.name).toBe("fail-4");
        expect((await call("POST", `${base}/${failed.body[0].id}/attempts`, { in: dw })).status).toBe(202);
        expect((await call("POST", `${base}/999999/attempts`, { in: dw })).status).toBe(404);
      }

      await dw.deliverWebhooksTo({ url, secret: "app-secret", app_id: APP_ID });
      await dw.queueJobs({ repository: "dlv/app", labels: ["self-hosted"], name: "fail-app" });
      await dw.settleDeliveries();
      const token = appJwt();
      const app = await call("GET", "/app/hook/deliveries", { token, query: "per_page=1&status=failure", in: dw });
      expect(app.body).toEqual([expect.objectContaining({ installation_id: 50, status_code: 500 })]);
      expect((await call("GET", `/app/hook/deliveries/${app.body[0].id}`, { token, in: dw })).body.request.payload).toBeTruthy();
      expect((await call("POST", `/app/hook/deliveries/${app.body[0].id}/attempts`, { token, in: dw })).status).toBe(202);
      await dw.settleDeliveries();
    } finally {
      await new Promise((r) => receiver.close(r));
    }
  });

  it("checked a success answer of every operation the fake implements", () => {
    expect([...validated].sort()).toEqual([...new Set(FAKE_OPERATIONS.map((o) => o.operation))].sort());
  });
});
