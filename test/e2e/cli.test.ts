/**
 * The `edgerunner` command-line client, run as a user runs it (the real bin, a child process,
 * secrets on stdin or in files) against the coordinator under `wrangler dev`, the fake GitHub and
 * the fake shim. Also: the types the CLI is built on match the document the coordinator serves.
 * Over ~400 lines on purpose: one coordinator started once for every command's scenario.
 */
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Coordinator, freePort, root, startCoordinator } from "../../bench/harness.mjs";
import { checkedInApiTypes, generateApiTypes } from "../../cli/generate-api-types.ts";
import { type FakeGithub, startFakeGithub } from "../fake-github/server.ts";
import { type FakeShim, startFakeShim } from "../fake-shim/server.ts";

const BIN = join(root, "cli/bin/edgerunner.mjs");
const SHIM_SECRET = "cli-shim-secret-0000001";

let github: FakeGithub;
let shim: FakeShim;
let coordinator: Coordinator;
let work: string;
let world: { id: string; url: string };
let tenant: { id: string; url: string };

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI (async: the fakes answer from this process meanwhile). Its environment has only
 * what `env` gives, plus a HOME and profile file of its own.
 */
function cli(args: string[], opts: { stdin?: string; env?: Record<string, string>; bin?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [opts.bin ?? BIN, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: work, EDGERUNNER_CONFIG: join(work, "config.json"), ...opts.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(opts.stdin ?? "");
  });
}

/** The coordinator from the environment, as in CI. */
const asAdmin = () => ({ EDGERUNNER_URL: coordinator.url, EDGERUNNER_TOKEN: coordinator.devVars.ADMIN_TOKEN! });

/** Runs with the admin's environment and expects success. */
async function ok(args: string[], opts: { stdin?: string } = {}): Promise<string> {
  const r = await cli(args, { ...opts, env: asAdmin() });
  expect(r.stderr, `edgerunner ${args.join(" ")}`).toBe("");
  expect(r.status).toBe(0);
  return r.stdout;
}
const json = async (args: string[], opts: { stdin?: string } = {}) => JSON.parse(await ok([...args, "--json"], opts));

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "edgerunner-cli-e2e-"));
  [github, shim] = await Promise.all([startFakeGithub(), startFakeShim()]);
  coordinator = await startCoordinator({ NUDGE_DELAY_SECONDS: "0", RECONCILE_INTERVAL_SECONDS: "3600" });
  world = await (await fetch(`${github.url}/_fake/worlds`, { method: "POST" })).json();
  await fetch(`${world.url}/_fake/seed`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ repos: ["octo/app"], orgs: ["octo"], enterprises: ["acme"], pats: [{ token: "ghp_cli", login: "cli" }] }),
  });
  tenant = await (
    await fetch(`${shim.url}/_control/tenants`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ secret: SHIM_SECRET, callback_url: `${coordinator.url}/api/v1/providers/shim/callbacks` }),
    })
  ).json();
}, 120_000);

afterAll(async () => {
  await coordinator?.stop();
  await Promise.all([github?.close(), shim?.stop()]);
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("edgerunner CLI against wrangler dev", () => {
  it("checked-in types equal what the served OpenAPI document generates", async () => {
    const doc = await (await fetch(`${coordinator.url}/api/v1/openapi.json`)).json();
    expect((await generateApiTypes(doc)) === checkedInApiTypes(), "cli/api-types.ts is stale: run `npm run cli:types`").toBe(true);
  });

  it("without configuration: a usage error (exit 2) that says how to configure", async () => {
    const r = await cli(["scaleset", "list"]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("no coordinator URL configured");
    expect(r.stderr).toContain("EDGERUNNER_URL");
  });

  it("an unreachable coordinator: exit 3", async () => {
    const r = await cli(["provider", "list"], { env: { EDGERUNNER_URL: `http://127.0.0.1:${await freePort()}`, EDGERUNNER_TOKEN: "x" } });
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/^edgerunner: cannot reach http:\/\/127\.0\.0\.1:\d+: /);
  });

  it("a wrong token: the API's 401 (exit 1)", async () => {
    const r = await cli(["provider", "list"], { env: { EDGERUNNER_URL: coordinator.url, EDGERUNNER_TOKEN: "wrong-token" } });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("(HTTP 401, unauthorized)");
  });

  it("login checks the token, then saves a 0600 profile the next commands use", async () => {
    const path = join(work, "config.json");
    const bad = await cli(["login", "--url", coordinator.url, "--token-from-stdin"], { stdin: "wrong-token\n" });
    expect(bad.status).toBe(1);
    expect(existsSync(path)).toBe(false);

    const good = await cli(["login", "--url", `${coordinator.url}/api/v1/`, "--profile", "dev", "--token-from-stdin"], {
      stdin: `${coordinator.devVars.ADMIN_TOKEN}\n`,
    });
    expect(good.stderr).toBe("");
    expect(good.status).toBe(0);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const file = JSON.parse(readFileSync(path, "utf8"));
    expect(file).toEqual({ current: "dev", profiles: { dev: { url: coordinator.url, token: coordinator.devVars.ADMIN_TOKEN } } });

    const list = await cli(["profile", "list"]);
    expect(list.stdout).not.toContain(coordinator.devVars.ADMIN_TOKEN);
    expect(list.stdout).toContain(`*  dev   ${coordinator.url}`);
    // No environment: the profile is used.
    const providers = await cli(["provider", "list", "--json"]);
    expect(providers.status).toBe(0);
    expect(JSON.parse(providers.stdout)).toEqual([]);
    // A flag beats the profile: --url elsewhere fails to connect.
    const elsewhere = await cli(["provider", "list", "--url", `http://127.0.0.1:${await freePort()}`]);
    expect(elsewhere.status).toBe(3);
    const unknown = await cli(["provider", "list", "--profile", "prod"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('no profile "prod"');
  });

  it("sets up a repository end to end: endpoint, credentials (token on stdin), repository (secret in a file), provider, scale set", async () => {
    const endpoint = await json([
      "endpoint",
      "create",
      "--name",
      "fake",
      "--base-url",
      "https://github.example.test",
      "--api-base-url",
      world.url,
    ]);
    expect(endpoint).toMatchObject({ name: "fake", api_base_url: world.url });

    // A secret on the command line is refused before anything is sent.
    const argvSecret = await cli(
      ["credential", "create", "--name", "pat", "--endpoint", "fake", "--auth-type", "pat", "--token", "ghp_cli"],
      { env: asAdmin() },
    );
    expect(argvSecret.status).toBe(2);
    expect(argvSecret.stderr).toContain("use --token-from-stdin or --token-from-file");

    const creds = await json(["credential", "create", "--name", "pat", "--endpoint", "fake", "--auth-type", "pat", "--token-from-stdin"], {
      stdin: "ghp_cli\n",
    });
    expect(creds).toMatchObject({ name: "pat", auth_type: "pat", has_secret: true });
    expect(JSON.stringify(creds)).not.toContain("ghp_cli");
    expect(await ok(["credential", "list"])).toMatch(/^ID +NAME +ENDPOINT +TYPE .*\n\S+ +pat +fake +pat /);
    expect(await json(["credential", "show", "pat"])).toMatchObject({ id: creds.id });

    const secretFile = join(work, "hook-secret");
    writeFileSync(secretFile, "cli-hook-secret-1\n");
    const repo = await json([
      "repo",
      "create",
      "--owner",
      "octo",
      "--name",
      "app",
      "--credentials",
      "pat",
      "--webhook-secret-from-file",
      secretFile,
    ]);
    expect(repo).toMatchObject({ owner: "octo", name: "app", credentials_name: "pat", has_webhook_secret: true });
    expect(await ok(["repos", "ls"])).toContain(`${repo.id}  octo/app  fake`);

    const provider = await json(["provider", "create", "--name", "shim", "--shim-url", tenant.url, "--secret-from-stdin"], {
      stdin: SHIM_SECRET,
    });
    expect(provider).toMatchObject({ name: "shim", has_secret: true });

    const scaleSet = await json([
      "scaleset",
      "create",
      "--repo",
      "octo/app",
      "--name",
      "linux",
      "--provider",
      "shim",
      "--labels",
      "self-hosted,linux",
      "--max-runners",
      "2",
      "--image",
      "ubuntu:24.04",
      "--flavor",
      "small",
      "--disabled",
    ]);
    expect(scaleSet).toMatchObject({
      name: "linux",
      enabled: false,
      labels: ["linux", "self-hosted"],
      entity: { kind: "repository", id: repo.id },
    });

    // A table for people: a header, then aligned rows (each column starts where its header does).
    const table = (await ok(["scaleset", "list"])).trimEnd().split("\n");
    expect(table).toHaveLength(2);
    const header = table[0]!;
    expect(header).toMatch(/^ID +NAME +ENTITY +PROVIDER +LABELS +MIN IDLE +MAX +ENABLED +IMAGE +FLAVOR$/);
    expect(table[1]!.slice(header.indexOf("NAME"))).toMatch(
      /^linux +repository:octo\/app +shim +linux,self-hosted +0 +2 +no +ubuntu:24\.04 +small$/,
    );
    expect(table[1]!.indexOf("repository:octo/app")).toBe(header.indexOf("ENTITY"));
    expect(await json(["scaleset", "list", "--repo", "octo/app"])).toEqual([expect.objectContaining({ id: scaleSet.id })]);

    // pause/resume set enabled; names work where ids do.
    expect(await json(["scaleset", "resume", "linux"])).toMatchObject({ id: scaleSet.id, enabled: true });
    expect(await json(["scaleset", "pause", scaleSet.id])).toMatchObject({ enabled: false });
    expect(
      await json(["scaleset", "update", "linux", "--max-runners", "3", "--no-jit-config", "--jit-timing", "before_create"]),
    ).toMatchObject({
      max_runners: 3,
      jit_config_enabled: false,
      jit_config_timing: "before_create",
    });
    expect(await json(["scaleset", "update", "linux", "--boot-time", "45"])).toMatchObject({ boot_time_seconds: 45 });
    expect(await json(["scaleset", "update", "linux", "--boot-time", "auto"])).toMatchObject({ boot_time_seconds: null });

    const reconciled = await json(["scaleset", "reconcile", "linux"]);
    expect(reconciled).toMatchObject({ scale_set_id: scaleSet.id, pending_operations: 0 });
    expect(reconciled.last_reconcile).not.toBeNull();
    expect(await json(["scaleset", "reset", "linux"])).toMatchObject({ scale_set_id: scaleSet.id });
    const shown = await ok(["scaleset", "show", "linux"]);
    expect(shown).toMatch(/^id: +\S+$/m);
    expect(shown).toMatch(/^status\.scale_set_id: +\S+$/m);

    expect(await ok(["instance", "list", "--scaleset", "linux"])).toMatch(
      /^NAME +STATUS +RUNNER +SCALE SET +JOB +FLAVOR +PROVIDER ID +UPDATED\n$/,
    );
    expect(await json(["job", "list", "--unmatched"])).toEqual({ jobs: [], next_cursor: null });

    expect(await ok(["scaleset", "delete", "linux"])).toBe("deleted scale set linux\n");
    expect(await json(["scaleset", "list"])).toEqual([]);
  });

  it("organizations and enterprises; the coordinator's webhook installed, shown and removed", async () => {
    const extra = await json(
      ["credential", "create", "--name", "pat-2", "--endpoint", "fake", "--auth-type", "pat", "--token-from-stdin"],
      {
        stdin: "ghp_cli_2\n",
      },
    );
    const org = await json(
      ["org", "create", "--name", "octo", "--credentials", "pat", "--pool-credentials", "pat-2", "--webhook-secret-from-stdin"],
      { stdin: "cli-org-secret-1" },
    );
    expect(org).toMatchObject({ name: "octo", credentials_name: "pat", pool_credentials: [{ id: extra.id, name: "pat-2" }] });
    expect(await ok(["orgs", "list"])).toContain(`${org.id}  octo  fake`);
    expect(await ok(["org", "show", "octo"])).toMatch(/^pool_credentials: +pat-2$/m);
    // A credential in a pool cannot go; out of every pool, it can.
    const held = await cli(["credential", "delete", "pat-2"], { env: asAdmin() });
    expect(held.status).toBe(1);
    expect(held.stderr).toContain("they are in the credential pool of organization octo");
    expect(await json(["org", "update", "octo", "--pool-credentials", ""])).toMatchObject({ pool_credentials: [] });
    expect(await ok(["credential", "delete", "pat-2"])).toBe("deleted credentials pat-2\n");
    const ent = await json(["enterprise", "create", "--name", "acme", "--credentials", "pat", "--webhook-secret-from-stdin"], {
      stdin: "cli-ent-secret-1",
    });
    expect(await json(["enterprise", "show", "acme"])).toMatchObject({ id: ent.id, name: "acme" });
    expect(await json(["repo", "update", "octo/app", "--use-parent-scale-sets", "--enterprise", "acme"])).toMatchObject({
      use_parent_scale_sets: true,
      enterprise: "acme",
    });

    const hook = await json(["repo", "webhook", "install", "octo/app"]);
    expect(hook).toMatchObject({ url: `${coordinator.url}/webhooks/github`, events: ["workflow_job"], active: true });
    expect(await ok(["repo", "webhook", "show", "octo/app"])).toMatch(new RegExp(`^url: +${coordinator.url}/webhooks/github$`, "m"));
    expect(await ok(["org", "webhook", "install", "octo"])).toMatch(/^events: +workflow_job$/m);
    expect(await ok(["org", "webhook", "remove", "octo"])).toBe("removed the webhook from organization octo\n");
    const gone = await cli(["org", "webhook", "show", "octo"], { env: asAdmin() });
    expect(gone.status).toBe(1);
    expect(gone.stderr).toContain("(HTTP 404, not_found)");

    expect(await json(["repo", "update", "octo/app", "--remove-enterprise"])).toMatchObject({ enterprise: null });
    expect(await ok(["enterprise", "delete", "acme"])).toBe("deleted enterprise acme\n");
  });

  it("doctor: the coordinator's checks plus PUBLIC_URL fetched from outside; exit 4 only when one failed", async () => {
    const scripted = await cli(["doctor", "--json"], { env: asAdmin() });
    expect(scripted.stderr).toBe("");
    const report = JSON.parse(scripted.stdout);
    expect(scripted.status).toBe(report.ok ? 0 : 4);
    const status = (id: string) => report.checks.find((c: { id: string }) => c.id.startsWith(id))?.status;
    // wrangler dev serves on loopback: fine here, a warning for a deployment.
    expect(status("config.public_url")).toBe("warn");
    expect(status("config.public_url_reachable")).toBe("ok");
    expect(status("cli.public_url_outside")).toBe("ok");
    expect(status("provider.shim")).toBe("ok");
    expect(status("entity.access")).toBe("ok");
    for (const secret of [SHIM_SECRET, "ghp_cli", "cli-hook-secret-1", coordinator.devVars.ADMIN_TOKEN!]) {
      expect(scripted.stdout).not.toContain(secret);
    }

    const human = await cli(["doctor"], { env: asAdmin() });
    expect(human.status).toBe(scripted.status);
    expect(human.stderr).toContain("checking");
    expect(human.stdout).toMatch(new RegExp(`^✓ PUBLIC_URL, seen from here: ${coordinator.url}/healthz answered in \\d+ ms\\.$`, "m"));
    expect(human.stdout).toMatch(/^! PUBLIC_URL: .*loopback.*\n {4}fix: /m);
  });

  it("instances: a scale set's idle runner listed, shown with its transitions, deleted with --force", async () => {
    const scaleSet = await json([
      "scaleset",
      "create",
      "--repo",
      "octo/app",
      "--name",
      "idle",
      "--provider",
      "shim",
      "--labels",
      "self-hosted,idle",
      "--max-runners",
      "1",
      "--min-idle-runners",
      "1",
      "--image",
      "ubuntu:24.04",
      "--flavor",
      "small",
    ]);
    let instances: { name: string; status: string }[] = [];
    for (let i = 0; i < 100 && !instances.some((x) => x.status === "running"); i++) {
      await json(["scaleset", "reconcile", "idle"]);
      instances = await json(["instance", "list", "--scaleset", scaleSet.id]);
      if (!instances.some((x) => x.status === "running")) await new Promise((r) => setTimeout(r, 200));
    }
    expect(instances).toEqual([expect.objectContaining({ status: "running" })]);
    const name = instances[0]!.name;
    expect(await ok(["instance", "list", "--status", "running"])).toMatch(new RegExp(`^${name} +running +`, "m"));
    const shown = await ok(["instance", "show", name]);
    expect(shown).toMatch(new RegExp(`^name: +${name}$`, "m"));
    expect(shown).toMatch(/^TRANSITIONS \(newest first\)\nAT +FIELD +FROM +TO +REASON\n/m);
    expect(await json(["instance", "show", name])).toMatchObject({
      name,
      transitions: expect.arrayContaining([expect.objectContaining({ field: "status", to: "running" })]),
    });

    await json(["scaleset", "pause", "idle"]);
    expect(await ok(["instance", "delete", name, "--force"])).toBe(`deleting instance ${name} (forced)\n`);
    expect((await json(["instance", "show", name])).status).toMatch(/^(pending_force_delete|deleting|deleted)$/);
  });

  it("API tokens: the value shown once, a read token reads but cannot write, revocation; the audit trail", async () => {
    const created = await json(["token", "create", "--name", "ci-read", "--scope", "read"]);
    expect(created).toMatchObject({ name: "ci-read", scope: "read", revoked_at: null });
    expect(created.token).toMatch(/^\S{20,}$/);
    const human = await ok(["token", "create", "--name", "ci-admin", "--scope", "admin"]);
    expect(human).toMatch(/^scope: +admin$/m);
    expect(human).toMatch(/\ntoken: \S{20,}\n\(shown once: store it now\)\n$/);
    const list = await ok(["tokens", "list"]);
    expect(list).not.toContain(created.token);
    expect(list).toMatch(/^ID +NAME +SCOPE +CREATED BY +EXPIRES +LAST USED +REVOKED$/m);
    expect(list).toMatch(/ ci-read +read +admin_token /);

    const asReader = { EDGERUNNER_URL: coordinator.url, EDGERUNNER_TOKEN: created.token };
    expect((await cli(["provider", "list", "--json"], { env: asReader })).status).toBe(0);
    const write = await cli(["scaleset", "pause", "idle"], { env: asReader });
    expect(write.status).toBe(1);
    expect(write.stderr).toContain("(HTTP 403, forbidden)");

    expect(await ok(["token", "revoke", "ci-read"])).toBe("revoked API token ci-read\n");
    const revoked = await cli(["provider", "list"], { env: asReader });
    expect(revoked.status).toBe(1);
    expect(revoked.stderr).toContain("(HTTP 401, unauthorized)");

    const deletes = await json(["audit", "list", "--method", "delete"]);
    expect(deletes.entries[0]).toMatchObject({ method: "DELETE", actor: "admin_token", resource: created.id, status: 204 });
    expect(deletes.entries.every((e: { method: string }) => e.method === "DELETE")).toBe(true);
    const page = await ok(["audit", "list", "--limit", "2"]);
    expect(page).toMatch(/^AT +ACTOR +VIA +METHOD +PATH +STATUS +RESOURCE\n.*\n.*\n\nmore: edgerunner audit list --cursor \d+\n$/);
    expect(JSON.stringify(await json(["audit", "list", "--limit", "500"]))).not.toContain(created.token);
  });

  it("prints the API's {error, details} and exits 1 on 404 and 400", async () => {
    const missing = await cli(["scaleset", "show", "0f0c2a4e-8a4b-4f6e-9d55-2b8c1b1f5b1e"], { env: asAdmin() });
    expect(missing.status).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toMatch(/^edgerunner: .*\(HTTP 404, not_found\)\n/);
    expect(missing.stderr).toMatch(/request id: \S+/);

    const bad = await cli(["provider", "create", "--name", "bad", "--shim-url", "not a url", "--secret-from-stdin"], {
      env: asAdmin(),
      stdin: SHIM_SECRET,
    });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^edgerunner: .*\(HTTP 400, invalid_body\)\n/);
    expect(bad.stderr).toContain('"url"');

    const noInstance = await cli(["instance", "delete", "no-such-runner", "--force"], { env: asAdmin() });
    expect(noInstance.status).toBe(1);
    expect(noInstance.stderr).toContain("(HTTP 404, not_found)");

    const noName = await cli(["scaleset", "pause", "no-such-scale-set"], { env: asAdmin() });
    expect(noName.status).toBe(1);
    expect(noName.stderr).toContain('no scale set named "no-such-scale-set"');
  });

  it("usage errors exit 2 and send nothing", async () => {
    for (const args of [
      ["scaleset", "frobnicate"],
      ["scaleset", "show"],
      ["scaleset", "update", "linux"],
      ["scaleset", "create", "--max-runners", "two"],
    ]) {
      const r = await cli(args, { env: asAdmin() });
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(/^edgerunner: /);
    }
  });

  it("runs as `npx edgerunner` from the checkout", async () => {
    const r = await new Promise<Run>((resolve) => {
      const child = spawn("npx", ["--no-install", "edgerunner", "--version"], {
        cwd: root,
        env: { ...process.env, npm_config_loglevel: "error" },
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("close", (status) => resolve({ status, stdout, stderr }));
    });
    expect(r.stdout).toBe(`edgerunner ${JSON.parse(readFileSync(join(root, "cli/package.json"), "utf8")).version}\n`);
    expect(r.status).toBe(0);
  });

  it("the package as published (compiled JavaScript, no sources) runs the same", async () => {
    // What `npm pack` in cli/ ships: bin/, dist/ (built by prepack) and package.json.
    const pkg = join(work, "published");
    mkdirSync(join(pkg, "bin"), { recursive: true });
    const tsc = spawnSync(
      process.execPath,
      [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "cli/tsconfig.build.json"), "--outDir", join(pkg, "dist")],
      { encoding: "utf8" },
    );
    expect(tsc.stdout + tsc.stderr).toBe("");
    copyFileSync(join(root, "cli/bin/edgerunner.mjs"), join(pkg, "bin/edgerunner.mjs"));
    copyFileSync(join(root, "cli/package.json"), join(pkg, "package.json"));
    symlinkSync(join(root, "node_modules"), join(pkg, "node_modules"));
    const bin = join(pkg, "bin/edgerunner.mjs");

    const version = await cli(["--version"], { bin });
    expect(version.stdout).toBe(`edgerunner ${JSON.parse(readFileSync(join(root, "cli/package.json"), "utf8")).version}\n`);
    const list = await cli(["credential", "list", "--json"], { bin, env: asAdmin() });
    expect(list.stderr).toBe("");
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ name: "pat" })]);
  });
});
