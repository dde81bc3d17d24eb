import { describe, expect, it } from "vitest";
import { GithubApiError, GithubError } from "../../src/github/errors";
import { USER_AGENT } from "../../src/github/github-client";
import {
  createRegistrationToken,
  DOWNLOADS_TTL_MS,
  deleteRunner,
  findRunnerByName,
  generateJitConfig,
  getJob,
  getRunner,
  isDuplicateRunnerName,
  listRunnerDownloads,
  listRunners,
  RUNNER_GROUPS_TTL_MS,
} from "../../src/github/runners";
import { type GithubScope, scopePath } from "../../src/github/scope";
import { client, createAppCredential, createEndpoint, createPatCredential, newWorld, TestClock } from "./github-helpers";

const scopes: { label: string; scope: GithubScope; key: string }[] = [
  { label: "repository", scope: { kind: "repository", owner: "octo", repo: "app" }, key: "repos/octo/app" },
  { label: "organization", scope: { kind: "organization", org: "octo" }, key: "orgs/octo" },
  { label: "enterprise", scope: { kind: "enterprise", enterprise: "acme" }, key: "enterprises/acme" },
];

const endpoints = [
  { label: "github.com", ghes: false },
  { label: "GHES", ghes: true },
];

const decodeJit = (b64: string) => {
  const files = JSON.parse(atob(b64)) as Record<string, string>;
  return Object.fromEntries(Object.entries(files).map(([k, v]) => [k, JSON.parse(atob(v))]));
};

describe.each(endpoints)("runner operations on $label", ({ ghes }) => {
  describe.each(scopes)("$label scope", ({ scope, key }) => {
    async function setup() {
      const world = await newWorld();
      const endpoint = await createEndpoint(world, ghes);
      const credentialId = await createPatCredential(endpoint);
      const clock = new TestClock();
      return { world, gh: client(credentialId, clock), clock };
    }

    it("generates a JIT config in the default group, then refuses the same name with 409", async () => {
      const { world, gh } = await setup();
      const jit = await generateJitConfig(gh, scope, { name: "er-1", labels: ["self-hosted", "linux"] });
      expect(jit.runner).toMatchObject({ name: "er-1", runner_group_id: 1, ephemeral: true });
      const files = decodeJit(jit.encodedJitConfig);
      expect(Object.keys(files).sort()).toEqual([".credentials", ".credentials_rsaparams", ".runner"]);
      expect(files[".runner"]).toMatchObject({ agentId: jit.runner.id, agentName: "er-1" });

      const err = await generateJitConfig(gh, scope, { name: "er-1", labels: ["self-hosted"] }).catch((e) => e);
      expect(err).toBeInstanceOf(GithubApiError);
      expect(isDuplicateRunnerName(err)).toBe(true);

      const reqs = (await world.requests()).filter((r) => r.path.endsWith("/generate-jitconfig"));
      expect(reqs).toHaveLength(2);
      expect(reqs[0]).toMatchObject({
        method: "POST",
        path: `/${key}/actions/runners/generate-jitconfig`,
        ghes,
        auth: "pat",
        user_agent: USER_AGENT,
        api_version: "2022-11-28",
        body: { name: "er-1", runner_group_id: 1, labels: ["self-hosted", "linux"], work_folder: "_work" },
      });
    });

    it("lists every runner across pages and finds one by name", async () => {
      const { world, gh } = await setup();
      await world.seed({
        runners: Array.from({ length: 230 }, (_, i) => ({ scope: key, name: `r-${i}` })),
      });
      await world.seed({ runners: [{ scope: "repos/octo/other", name: "elsewhere" }] });
      const all = await listRunners(gh, scope);
      expect(all).toHaveLength(230);
      expect(new Set(all.map((r) => r.name)).size).toBe(230);
      const pages = (await world.requests()).filter((r) => r.path === `/${key}/actions/runners`);
      expect(pages.map((p) => p.query.page ?? "1")).toEqual(["1", "2", "3"]);

      expect(await findRunnerByName(gh, scope, "R-117")).toMatchObject({ name: "r-117" });
      expect(await findRunnerByName(gh, scope, "nope")).toBeNull();
    });

    it("deletes a runner: 204 deleted, 404 already gone, 422 busy (retry later)", async () => {
      const { world, gh } = await setup();
      await world.seed({
        runners: [
          { scope: key, name: "idle", id: 11 },
          { scope: key, name: "busy", id: 12, busy: true },
        ],
      });
      expect(await getRunner(gh, scope, 12)).toMatchObject({ id: 12, name: "busy", busy: true, status: "online" });
      expect(await deleteRunner(gh, scope, 11)).toEqual({ outcome: "deleted" });
      expect(await deleteRunner(gh, scope, 11)).toEqual({ outcome: "already_gone" });
      const busy = await deleteRunner(gh, scope, 12);
      expect(busy.outcome).toBe("busy");
      expect((await world.state()).runners.map((r) => r.id)).toEqual([12]);
      expect(await getRunner(gh, scope, 11)).toBeNull();
      // One request per call: a busy runner is an answer, not something to retry in place.
      expect((await world.requests()).filter((r) => r.method === "DELETE")).toHaveLength(3);
    });

    it("creates a registration token", async () => {
      const { gh } = await setup();
      const t = await createRegistrationToken(gh, scope);
      expect(t.token).toMatch(/^\S{20,}$/);
      expect(Date.parse(t.expiresAt)).toBeGreaterThan(Date.now());
    });

    it("lists runner downloads once per hour per entity", async () => {
      const { world, gh, clock } = await setup();
      const first = await listRunnerDownloads(gh, scope);
      expect(first.find((d) => d.os === "linux" && d.architecture === "x64")?.download_url).toMatch(/actions-runner-linux-x64/);
      await listRunnerDownloads(gh, scope);
      clock.advance(DOWNLOADS_TTL_MS - 1000);
      await listRunnerDownloads(gh, scope);
      const count = async () => (await world.requests()).filter((r) => r.path.endsWith("/actions/runners/downloads")).length;
      expect(await count()).toBe(1);
      clock.advance(2000);
      expect(await listRunnerDownloads(gh, scope)).toEqual(first);
      expect(await count()).toBe(2);
    });
  });

  it("gets a job's status, null when GitHub does not know it", async () => {
    const world = await newWorld();
    const gh = client(await createPatCredential(await createEndpoint(world, ghes)), new TestClock());
    await world.putJobs({ id: 901, repository: "octo/app", status: "in_progress", runner_id: 5, runner_name: "er-5" });
    expect(await getJob(gh, { owner: "octo", repo: "app" }, 901)).toMatchObject({
      id: 901,
      status: "in_progress",
      conclusion: null,
      runner_name: "er-5",
    });
    expect(await getJob(gh, { owner: "octo", repo: "app" }, 902)).toBeNull();
  });
});

describe("runner groups", () => {
  it("resolves a named group once and reuses the id (cached in D1, shared by every client)", async () => {
    const world = await newWorld();
    await world.seed({ runner_groups: { "orgs/octo": [{ id: 7, name: "GPU" }] } });
    const endpoint = await createEndpoint(world);
    const credentialId = await createPatCredential(endpoint);
    const clock = new TestClock();
    const org: GithubScope = { kind: "organization", org: "octo" };

    const a = await generateJitConfig(client(credentialId, clock), org, { name: "g-1", labels: ["gpu"], runnerGroup: "gpu" });
    const b = await generateJitConfig(client(credentialId, clock), org, { name: "g-2", labels: ["gpu"], runnerGroup: "gpu" });
    expect([a.runner.runner_group_id, b.runner.runner_group_id]).toEqual([7, 7]);
    const groupCalls = async () => (await world.requests()).filter((r) => r.path.endsWith("/actions/runner-groups")).length;
    expect(await groupCalls()).toBe(1);

    clock.advance(RUNNER_GROUPS_TTL_MS + 1);
    await generateJitConfig(client(credentialId, clock), org, { name: "g-3", labels: ["gpu"], runnerGroup: "GPU" });
    expect(await groupCalls()).toBe(2);
  });

  it("fails clearly for a group that does not exist, and for named groups on a repository", async () => {
    const world = await newWorld();
    const gh = client(await createPatCredential(await createEndpoint(world)), new TestClock());
    await expect(
      generateJitConfig(gh, { kind: "organization", org: "octo" }, { name: "x", labels: ["a"], runnerGroup: "nope" }),
    ).rejects.toThrow(/runner group 'nope' does not exist/);
    await expect(
      generateJitConfig(gh, { kind: "repository", owner: "octo", repo: "app" }, { name: "x", labels: ["a"], runnerGroup: "gpu" }),
    ).rejects.toBeInstanceOf(GithubError);
    expect((await world.state()).runners).toEqual([]);
  });

  it("passes 409 from an injected duplicate-name fault through as a duplicate", async () => {
    const world = await newWorld();
    const gh = client(await createPatCredential(await createEndpoint(world)), new TestClock());
    await world.fault({ kind: "duplicate_runner", path: "/generate-jitconfig" });
    const err = await generateJitConfig(gh, { kind: "organization", org: "octo" }, { name: "dup", labels: ["a"] }).catch((e) => e);
    expect(isDuplicateRunnerName(err)).toBe(true);
  });

  it("reports a busy runner from an injected 422", async () => {
    const world = await newWorld();
    await world.seed({ runners: [{ scope: "orgs/octo", name: "r", id: 31 }] });
    const gh = client(await createPatCredential(await createEndpoint(world)), new TestClock());
    await world.fault({ kind: "busy_runner", method: "DELETE" });
    expect((await deleteRunner(gh, { kind: "organization", org: "octo" }, 31)).outcome).toBe("busy");
    expect(await deleteRunner(gh, { kind: "organization", org: "octo" }, 31)).toEqual({ outcome: "deleted" });
  });
});

describe("App credentials", () => {
  it.each([
    ["PKCS#1", "pkcs1"],
    ["PKCS#8", "pkcs8"],
  ] as const)("authenticate with a %s key: one installation token serves many calls and clients", async (_label, form) => {
    const { appKeyPkcs1, appKeyPkcs8 } = await import("./github-helpers");
    const world = await newWorld();
    const credentialId = await createAppCredential(await createEndpoint(world), form === "pkcs1" ? appKeyPkcs1 : appKeyPkcs8);
    const clock = new TestClock();
    const org: GithubScope = { kind: "organization", org: "octo" };
    const gh = client(credentialId, clock);
    await Promise.all([listRunners(gh, org), listRunners(gh, org), createRegistrationToken(gh, org)]);
    // Another isolate: a new client, same D1.
    await listRunners(client(credentialId, clock), org);
    await generateJitConfig(client(credentialId, clock), org, { name: "app-1", labels: ["x"] });

    const reqs = await world.requests();
    const mints = reqs.filter((r) => r.path === "/app/installations/777/access_tokens");
    expect(mints).toHaveLength(1);
    expect(mints[0]).toMatchObject({ auth: "app", principal: "4242", status: 201 });
    const rest = reqs.filter((r) => r.path.startsWith(scopePath(org)));
    expect(rest).toHaveLength(6); // 3 lists, a registration token, runner groups, JIT
    expect(rest.every((r) => r.auth === "installation" && r.principal === "777" && r.status < 300)).toBe(true);
  });

  it("mints a new token shortly before the old one expires", async () => {
    const world = await newWorld();
    const credentialId = await createAppCredential(await createEndpoint(world));
    const clock = new TestClock();
    const repo: GithubScope = { kind: "repository", owner: "octo", repo: "app" };
    await listRunners(client(credentialId, clock), repo);
    clock.advance(50 * 60_000);
    await world.setNow(clock.now());
    await listRunners(client(credentialId, clock), repo);
    clock.advance(6 * 60_000); // within 5 minutes of expiry now
    await world.setNow(clock.now());
    await listRunners(client(credentialId, clock), repo);
    const mints = (await world.requests()).filter((r) => r.path.endsWith("/access_tokens"));
    expect(mints).toHaveLength(2);
  });

  it("serves enterprise runners only to PATs (GitHub refuses Apps there)", async () => {
    const world = await newWorld();
    const gh = client(await createAppCredential(await createEndpoint(world)), new TestClock());
    const err = await listRunners(gh, { kind: "enterprise", enterprise: "acme" }).catch((e) => e);
    expect(err).toBeInstanceOf(GithubApiError);
    expect(err.status).toBe(403);
  });
});
