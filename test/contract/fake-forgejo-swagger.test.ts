/**
 * The fake Forgejo against Forgejo's published API description (a trimmed copy stored as a fact:
 * test/fixtures/forgejo-swagger-runners.json, whose `x-fact` names its sources and version). For
 * every REST call Edgerunner makes (src/forges/forgejo/forgejo-api.ts), in every scope:
 *  - the operation exists in the description, with the method we use;
 *  - what we send validates against its body schema;
 *  - the fake answers with a status the description lists, and a body that validates against it
 *    and that our own parsers (the zod schemas Edgerunner reads Forgejo with) accept.
 */

import { readFileSync } from "node:fs";
import Ajv from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ForgejoScope,
  forgejoJobSchema,
  forgejoRunnerSchema,
  registeredRunnerSchema,
  runnersPath,
} from "../../src/forges/forgejo/forgejo-shapes.ts";
import { type FakeForgejo, startFakeForgejo } from "../fake-forgejo/server.ts";

const swagger: any = JSON.parse(readFileSync(new URL("../fixtures/forgejo-swagger-runners.json", import.meta.url), "utf8"));
type Method = "get" | "post" | "delete";
const paths = swagger.paths as Record<string, Record<string, any>>;
const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addSchema({ definitions: swagger.definitions }, "forgejo");

/** The description's path template of a concrete path we call (`/repos/o/r/actions/runners/7` → `/repos/{owner}/{repo}/actions/runners/{runner_id}`). */
function templateOf(path: string): string | null {
  for (const template of Object.keys(paths)) {
    const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    if (re.test(path)) return template;
  }
  return null;
}

function validator(schema: any) {
  return ajv.compile({ ...JSON.parse(JSON.stringify(schema).replaceAll("#/definitions/", "forgejo#/definitions/")) });
}

let fake: FakeForgejo;
let api: string;
const TOKEN = "contract-token";
const headers = { authorization: `token ${TOKEN}`, "content-type": "application/json" };

beforeAll(async () => {
  fake = await startFakeForgejo();
  const world = (await (await fetch(`${fake.url}/_fake/worlds`, { method: "POST" })).json()) as { url: string; api_url: string };
  api = world.api_url;
  await fetch(`${world.url}/_fake/tokens`, { method: "POST", body: JSON.stringify({ token: TOKEN }) });
  await fetch(`${world.url}/_fake/jobs`, {
    method: "POST",
    body: JSON.stringify({ owner: "acme", repo: "app", runs_on: ["linux"], count: 2 }),
  });
});
afterAll(() => fake.close());

const scopes: ForgejoScope[] = [
  { kind: "repository", owner: "acme", repo: "app" },
  { kind: "organization", org: "acme" },
  { kind: "instance" },
];

/** The calls Edgerunner makes, per scope: method, path, body. */
const calls = (scope: ForgejoScope, runnerId: number) => [
  { op: "list waiting jobs", method: "get" as Method, path: `${runnersPath(scope)}/jobs` },
  {
    op: "register an ephemeral runner",
    method: "post" as Method,
    path: runnersPath(scope),
    body: { name: "edgerunner-x", ephemeral: true },
  },
  { op: "list runners", method: "get" as Method, path: `${runnersPath(scope)}?page=1&limit=50` },
  { op: "get a runner", method: "get" as Method, path: `${runnersPath(scope)}/${runnerId}` },
  { op: "delete a runner", method: "delete" as Method, path: `${runnersPath(scope)}/${runnerId}` },
  { op: "get a runner that is gone", method: "get" as Method, path: `${runnersPath(scope)}/999999` },
  { op: "delete a runner that is gone", method: "delete" as Method, path: `${runnersPath(scope)}/999999` },
];

describe.each(scopes)("Forgejo runner API, scope %o", (scope) => {
  it("every call is in the description, and the fake answers as it says", async () => {
    // A runner to get and delete.
    const made = await fetch(`${api}${runnersPath(scope)}`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "seed", ephemeral: true }),
    });
    const runnerId = registeredRunnerSchema.parse(await made.json()).id;
    for (const call of calls(scope, runnerId)) {
      const bare = call.path.split("?")[0]!;
      const template = templateOf(bare);
      expect(template, `${call.op}: ${bare} is not in Forgejo's description`).not.toBeNull();
      const operation = paths[template!]![call.method];
      expect(operation, `${call.op}: ${call.method.toUpperCase()} ${template}`).toBeDefined();
      if (call.body) {
        const bodyParam = operation.parameters.find((p: any) => p.in === "body");
        const valid = validator(bodyParam.schema);
        expect(valid(call.body), `${call.op}: body ${ajv.errorsText(valid.errors)}`).toBe(true);
      }
      const res = await fetch(`${api}${call.path}`, {
        method: call.method.toUpperCase(),
        headers,
        body: call.body ? JSON.stringify(call.body) : undefined,
      });
      const answered = operation.responses[String(res.status)];
      expect(answered, `${call.op}: the fake answered ${res.status}, which the description does not list`).toBeDefined();
      if (answered.schema) {
        const body = await res.json();
        const valid = validator(answered.schema);
        expect(valid(body), `${call.op}: ${ajv.errorsText(valid.errors)}`).toBe(true);
        if (call.op === "list waiting jobs") for (const j of body) expect(forgejoJobSchema.safeParse(j).success).toBe(true);
        if (call.op === "list runners") {
          expect(res.headers.get("x-total-count")).not.toBeNull();
          for (const r of body) expect(forgejoRunnerSchema.safeParse(r).success).toBe(true);
        }
        if (call.op === "get a runner") expect(forgejoRunnerSchema.safeParse(body).success).toBe(true);
        if (call.op === "register an ephemeral runner") expect(registeredRunnerSchema.safeParse(body).success).toBe(true);
      }
    }
  });
});

it("the fake refuses a request without a token, as Forgejo does", async () => {
  const res = await fetch(`${api}/admin/actions/runners/jobs`);
  expect(res.status).toBe(401);
});
