/** The pure parts of `edgerunner setup`: the deploy config, the decisions, and reading wrangler's output. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { committedVar, readDeploySettings, renderDeployConfig } from "../../../cli/src/setup/deploy-config.ts";
import {
  adminTokenFor,
  afterDeploy,
  checkLogin,
  chosenPublicUrl,
  needsNewShimSecret,
  planDatabase,
  planProvider,
} from "../../../cli/src/setup/plan.ts";
import {
  deployTargets,
  isWorkerNotFound,
  migrationsApplied,
  parseSecretList,
  parseWhoami,
  workersDevUrl,
} from "../../../cli/src/setup/wrangler-output.ts";

const committed = readFileSync(new URL("../../../wrangler.toml", import.meta.url), "utf8");
const shim = readFileSync(new URL("../../../shims/aws-ec2/wrangler.toml", import.meta.url), "utf8");

describe("the deploy config", () => {
  const settings = {
    database: { name: "runners", id: "5c1f0c57-0000-4000-8000-000000000001" },
    vars: { PUBLIC_URL: "https://ci.example.com" },
  };

  it("is the committed wrangler.toml with the account's database and URL put in, and says how it was made", () => {
    const text = renderDeployConfig(committed, settings, "wrangler.toml");
    expect(text).toContain('database_name = "runners"');
    expect(text).toContain('database_id = "5c1f0c57-0000-4000-8000-000000000001"');
    expect(text).toContain('PUBLIC_URL = "https://ci.example.com"');
    expect(text).not.toContain("00000000-0000-0000-0000-000000000000");
    expect(text).not.toContain("127.0.0.1:8787");
    // Everything else is the committed file's: its crons, bindings and comments.
    expect(text).toContain('crons = ["17 * * * *"]');
    expect(text).toContain('class_name = "ScaleSet"');
    expect(readDeploySettings(text)).toEqual(settings);
    expect(readDeploySettings(committed)).toBeUndefined();
  });

  it("adds a var the table does not set, and leaves commented ones alone", () => {
    const text = renderDeployConfig(shim, { vars: { AWS_REGION: "eu-central-1", CONTROLLER_ID: "c1" } }, "shims/aws-ec2/wrangler.toml");
    expect(text).toContain('AWS_REGION = "eu-central-1"');
    expect(text).toContain('CONTROLLER_ID = "c1"');
    expect(text).toContain('# CONTROLLER_ID = ""');
    expect(committedVar(shim, "AWS_REGION")).toBe("us-east-1");
  });

  it("refuses a committed file without the table to change, rather than deploy something else", () => {
    expect(() => renderDeployConfig('name = "x"\n', settings, "wrangler.toml")).toThrow("wrangler.toml has no [d1_databases] table");
  });

  it("escapes values as TOML strings", () => {
    const text = renderDeployConfig(shim, { vars: { AWS_REGION: 'a"b\\c' } }, "s");
    expect(text).toContain('AWS_REGION = "a\\"b\\\\c"');
    expect(committedVar(text, "AWS_REGION")).toBe('a"b\\c');
  });
});

describe("the decisions", () => {
  const one = { loggedIn: true, accounts: [{ id: "a1", name: "Me" }] };

  it("login: not logged in, one account, several, or the one named", () => {
    expect(checkLogin({ loggedIn: false, accounts: [] }, undefined)).toMatchObject({ ok: false, message: "not logged in to Cloudflare" });
    expect(checkLogin(undefined, undefined)).toMatchObject({ ok: false });
    expect(checkLogin(one, undefined)).toEqual({ ok: true, account: { id: "a1", name: "Me" } });
    const two = { loggedIn: true, accounts: [...one.accounts, { id: "b2", name: "Work" }] };
    expect(checkLogin(two, undefined)).toMatchObject({ ok: false, hint: expect.stringContaining("b2  Work") });
    expect(checkLogin(two, "b2")).toEqual({ ok: true, account: { id: "b2", name: "Work" } });
    expect(checkLogin(two, "c3")).toMatchObject({ ok: false });
  });

  it("the database is reused by name, created otherwise", () => {
    expect(planDatabase([{ uuid: "u1", name: "edgerunner" }], "edgerunner")).toEqual({ kind: "reuse", id: "u1" });
    expect(planDatabase([{ uuid: "u1", name: "other" }], "edgerunner")).toEqual({ kind: "create" });
  });

  it("PUBLIC_URL: the flag stands; else the workers.dev URL, deployed once more when the deploy used another", () => {
    expect(afterDeploy("https://ci.example.com", undefined, "https://er.x.workers.dev")).toEqual({
      kind: "done",
      url: "https://ci.example.com",
    });
    expect(afterDeploy(undefined, undefined, "https://er.x.workers.dev")).toEqual({ kind: "redeploy", url: "https://er.x.workers.dev" });
    expect(afterDeploy(undefined, "https://er.x.workers.dev", "https://er.x.workers.dev")).toEqual({
      kind: "done",
      url: "https://er.x.workers.dev",
    });
    expect(afterDeploy(undefined, "https://er.old.workers.dev", "https://er.x.workers.dev")).toMatchObject({ kind: "redeploy" });
    expect(afterDeploy(undefined, undefined, undefined)).toMatchObject({ kind: "refuse", hint: expect.stringContaining("--public-url") });
    // A custom URL an earlier run was given stays chosen; a workers.dev one was only learned.
    expect(chosenPublicUrl(undefined, "https://ci.example.com")).toBe("https://ci.example.com");
    expect(chosenPublicUrl(undefined, "https://er.old.workers.dev")).toBeUndefined();
    expect(chosenPublicUrl("https://a.example", "https://ci.example.com")).toBe("https://a.example");
  });

  it("the provider: created with the new secret, updated with what changed, or left alone", () => {
    expect(planProvider(undefined, "https://s", "new-secret-000000")).toEqual({ kind: "create", secret: "new-secret-000000" });
    // A new URL only ever goes with a new secret: the coordinator refuses it alone while scale sets use the provider.
    expect(planProvider({ url: "https://old" }, "https://s", undefined)).toEqual({ kind: "move" });
    expect(planProvider({ url: "https://old" }, "https://s", "n")).toEqual({ kind: "update", body: { url: "https://s", secret: "n" } });
    expect(planProvider({ url: "https://s" }, "https://s", "n")).toEqual({ kind: "update", body: { secret: "n" } });
    expect(planProvider({ url: "https://s" }, "https://s", undefined)).toEqual({ kind: "unchanged" });
    expect(needsNewShimSecret(true, true)).toBe(false);
    expect(needsNewShimSecret(true, false)).toBe(true);
    expect(needsNewShimSecret(false, true)).toBe(true);
  });

  it("the admin token: this run's, EDGERUNNER_TOKEN, or a profile for the same URL only", () => {
    const profiles = { other: { url: "https://other.example", token: "o" }, mine: { url: "https://er.example/", token: "m" } };
    expect(adminTokenFor("c", { EDGERUNNER_TOKEN: "e" }, profiles, "https://er.example")).toBe("c");
    expect(adminTokenFor(undefined, { EDGERUNNER_TOKEN: "e" }, profiles, "https://er.example")).toBe("e");
    expect(adminTokenFor(undefined, {}, profiles, "https://er.example")).toBe("m");
    expect(adminTokenFor(undefined, {}, { other: profiles.other }, "https://er.example")).toBeUndefined();
  });
});

describe("reading wrangler", () => {
  it("whoami --json, logged in or not", () => {
    expect(parseWhoami('{"loggedIn":false}')).toEqual({ loggedIn: false, accounts: [] });
    expect(parseWhoami('{\n "loggedIn": true, "email": "a@b", "accounts": [{"id": "x", "name": "X"}]\n}')).toEqual({
      loggedIn: true,
      email: "a@b",
      accounts: [{ id: "x", name: "X" }],
    });
    expect(parseWhoami("Getting User settings...")).toBeUndefined();
  });

  it("secret list, a Worker not deployed yet, migrations, deploy targets", () => {
    expect(parseSecretList('[\n  {\n    "name": "ADMIN_TOKEN",\n    "type": "secret_text"\n  }\n]')).toEqual(["ADMIN_TOKEN"]);
    expect(isWorkerNotFound('✘ [ERROR] Worker "edgerunner" not found.\n\nIf this is a new Worker, run `wrangler deploy` first')).toBe(true);
    expect(isWorkerNotFound("Authentication error [code: 10000]")).toBe(false);
    expect(migrationsApplied("✅ No migrations to apply!")).toBe(0);
    expect(migrationsApplied("Migrations to be applied:\n│ 0000_init.sql │\n│ 0001_seed.sql │\n│ 0000_init.sql │ ✅ │")).toBe(2);
    const ndjson = [
      '{"type":"wrangler-session","version":1}',
      '{"type":"deploy","version":1,"targets":["https://er.x.workers.dev","schedule: 17 * * * *"]}',
      "{",
    ].join("\n");
    expect(deployTargets(ndjson)).toEqual(["https://er.x.workers.dev", "schedule: 17 * * * *"]);
    expect(workersDevUrl(["ci.example.com/*", "https://er.x.workers.dev"])).toBe("https://er.x.workers.dev");
    expect(workersDevUrl(["schedule: 17 * * * *"])).toBeUndefined();
  });
});
