/**
 * The fake GitHub refuses the manifests GitHub refuses, in GitHub's words where they are known
 * ("Default events are not supported by permissions: …"), as a readable 422 page, and makes no
 * App then. (In the unit project: the checks as plain functions, then over HTTP.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkManifest, nameProblems, slugOf } from "../fake-github/apps/manifest-check.ts";
import { createWorld } from "../fake-github/control-client.ts";
import { type FakeGithub, startFakeGithub } from "../fake-github/server.ts";

const valid = {
  name: "Edgerunner",
  url: "https://edgerunner.example.com",
  hook_attributes: { url: "https://edgerunner.example.com/webhooks/github" },
  redirect_url: "https://edgerunner.example.com/ui/setup/github/created",
  default_permissions: { actions: "read", administration: "write" },
  default_events: ["workflow_job"],
};
const problems = (m: unknown) => {
  const checked = checkManifest(typeof m === "string" ? m : JSON.stringify(m));
  return checked.ok ? [] : checked.problems;
};

describe("checkManifest", () => {
  it("accepts GitHub's own example and a manifest with no webhook", () => {
    expect(checkManifest(JSON.stringify(valid))).toEqual({ ok: true, manifest: valid });
    expect(problems({ url: "https://example.com" })).toEqual([]);
    expect(problems({ url: "https://example.com", hook_attributes: { active: false } })).toEqual([]);
  });

  it.each([
    [{ ...valid, url: undefined }, "Homepage URL (url) can't be blank"],
    [{ ...valid, url: "example.com" }, "Homepage URL (url) must be a full http(s) URL"],
    [{ ...valid, hook_attributes: {} }, "Webhook URL (hook_attributes.url) can't be blank"],
    [{ ...valid, hook_attributes: { url: "ftp://x" } }, "Webhook URL (hook_attributes.url) must be a full http(s) URL"],
    [{ ...valid, hook_attributes: { url: valid.url, active: "yes" } }, "hook_attributes.active must be true or false"],
    [{ ...valid, redirect_url: "/relative" }, "redirect_url must be a full http(s) URL"],
    [{ ...valid, setup_url: 3 }, "setup_url must be a full http(s) URL"],
    [{ ...valid, callback_urls: Array(11).fill(valid.url) }, "callback_urls: at most 10 callback URLs"],
    [{ ...valid, name: "x".repeat(35) }, "Name is too long (maximum is 34 characters)"],
    [{ ...valid, public: "true" }, "public must be true or false"],
    [{ ...valid, default_permissions: { administration: "admin" } }, "Default permission administration must be read or write"],
    [{ ...valid, default_permissions: { ...valid.default_permissions, runners: "write" } }, "Default permission runners does not exist"],
    [{ ...valid, default_permissions: ["actions"] }, "default_permissions must be an object of permission name to access level"],
    [{ ...valid, default_permissions: {} }, "Default events are not supported by permissions: workflow_job"],
    [{ ...valid, default_events: ["workflow_job", "push", "issues"] }, "Default events are not supported by permissions: push and issues"],
    [{ ...valid, default_events: "workflow_job" }, "default_events must be a list of event names"],
  ])("refuses %j: %s", (m, problem) => {
    expect(problems(m)).toContain(problem);
  });

  it("refuses events an App cannot subscribe, as GitHub words it", () => {
    expect(problems({ ...valid, default_events: ["workflow_job", "installation", "installation_repositories"] })).toEqual([
      "Default events unsupported: installation and installation_repositories",
      "Default events are not supported by permissions: installation and installation_repositories",
    ]);
  });

  it("refuses what is not a manifest at all", () => {
    expect(checkManifest(null)).toEqual({ ok: false, problems: ["The manifest parameter is missing"] });
    expect(problems("{not json")).toEqual(["The manifest is not valid JSON"]);
    expect(problems([valid])).toEqual(["The manifest must be a JSON object"]);
  });

  it("a write or admin level opens what read opens", () => {
    expect(problems({ ...valid, default_permissions: { actions: "write" } })).toEqual([]);
    expect(problems({ ...valid, default_permissions: { checks: "read" }, default_events: ["check_run", "check_suite"] })).toEqual([]);
  });
});

describe("App names", () => {
  it("slugs them as GitHub shows them", () => {
    expect(slugOf("My APp Näme")).toBe("my-app-name");
    expect(slugOf("  Edge--runner (prod)! ")).toBe("edge-runner-prod");
  });

  it("refuses blank, long, taken, and other accounts' names", () => {
    const taken = { slugs: ["edgerunner"], accounts: ["octocat", "octo"], owner: "octo" };
    expect(nameProblems(" ", taken)).toEqual(["Name can't be blank"]);
    expect(nameProblems("!!!", taken)).toEqual(["Name must contain letters or digits"]);
    expect(nameProblems("x".repeat(35), taken)).toEqual(["Name is too long (maximum is 34 characters)"]);
    expect(nameProblems("EdgeRunner", taken)).toEqual(["Name is already in use"]);
    expect(nameProblems("octocat", taken)).toEqual(["Name is already in use by an account"]);
    expect(nameProblems("Octo", taken)).toEqual([]);
  });
});

describe("the form target", () => {
  let github: FakeGithub;
  beforeAll(async () => {
    github = await startFakeGithub();
  });
  afterAll(() => github.close());

  const post = (url: string, fields: Record<string, string>) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
      redirect: "manual",
    });

  it("answers a readable 422 page and makes nothing", async () => {
    const world = await createWorld(github.url);
    const res = await post(`${world.url}/settings/apps/new?state=s`, { manifest: JSON.stringify({ ...valid, default_permissions: {} }) });
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const page = await res.text();
    expect(page).toContain("<h1>Invalid GitHub App configuration</h1>");
    expect(page).toContain("<li>The configuration does not appear to be a valid GitHub App manifest.</li>");
    expect(page).toContain("<li>Error: Default events are not supported by permissions: workflow_job</li>");
    const confirmed = await post(`${world.url}/settings/apps/new`, { manifest: "{", confirm: "1", name: "x" });
    expect(confirmed.status).toBe(422);
    expect((await world.apps()).apps).toEqual([]);
  });

  it("needs the organization to exist, and a name no App has", async () => {
    const world = await createWorld(github.url);
    await world.seed({ orgs: ["octo"] });
    const missing = await post(`${world.url}/organizations/nope/settings/apps/new`, { manifest: JSON.stringify(valid) });
    expect(missing.status).toBe(404);
    const create = () =>
      post(`${world.url}/organizations/octo/settings/apps/new`, { manifest: JSON.stringify(valid), confirm: "1", name: "Edgerunner" });
    expect((await create()).status).toBe(302);
    const again = await create();
    expect([again.status, await again.text()]).toEqual([422, expect.stringContaining("<li>Name is already in use</li>")]);
    const blank = await post(`${world.url}/settings/apps/new`, { manifest: JSON.stringify({ ...valid, name: undefined }), confirm: "1" });
    expect([blank.status, await blank.text()]).toEqual([422, expect.stringContaining("<li>Name can&#39;t be blank</li>")]);
    expect((await world.apps()).apps.map((a) => a.slug)).toEqual(["edgerunner"]);
  });
});
