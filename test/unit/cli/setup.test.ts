/**
 * `edgerunner setup` as users run it: the real CLI process, in a temporary checkout, against
 * the fake wrangler (test/fake-wrangler) on PATH. With `--shim`: setup-shim.test.ts.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { freshState, makeWorkspace, type Workspace } from "../../fake-wrangler/workspace.ts";

// Each test starts the CLI (and through it the fake wrangler) a dozen times: seconds on a busy machine.
vi.setConfig({ testTimeout: 60_000 });

const sha = (v: string) => createHash("sha256").update(v).digest("hex");
const URL_ = "https://edgerunner.example.workers.dev";
const CHANGING = ["d1 create", "d1 migrations", "secret bulk", "deploy"];
const argvOf = (ws: Workspace) => ws.calls().map((c) => c.argv.join(" "));
const changes = (ws: Workspace) => argvOf(ws).filter((a) => CHANGING.some((c) => a.startsWith(c)));

let spaces: Workspace[] = [];
const workspace = (state = freshState()) => {
  const ws = makeWorkspace(state);
  spaces.push(ws);
  return ws;
};
afterEach(() => {
  for (const ws of spaces) ws.remove();
  spaces = [];
});

describe("edgerunner setup, first run", () => {
  it("creates the database, puts four generated secrets, migrates, deploys with its workers.dev URL, and prints the admin token once", async () => {
    const ws = workspace();
    const r = await ws.run(["setup"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(argvOf(ws)).toEqual([
      "whoami --json",
      "d1 list --json",
      "d1 create edgerunner",
      "d1 list --json",
      "d1 migrations apply DB --remote -c wrangler.deploy.toml",
      "secret list --format json -c wrangler.deploy.toml",
      "secret bulk -c wrangler.deploy.toml",
      // The first deploy tells the workers.dev URL; the second goes out with it as PUBLIC_URL.
      "deploy -c wrangler.deploy.toml",
      "deploy -c wrangler.deploy.toml",
    ]);

    const state = ws.state();
    const db = state.databases.find((d) => d.name === "edgerunner")!;
    expect(state.applied[db.uuid]).toEqual(
      readdirSync(join(ws.dir, "migrations"))
        .filter((f) => f.endsWith(".sql"))
        .sort(),
    );
    expect(state.applied[db.uuid]).toContain("0000_init.sql");
    const secrets = state.workers.edgerunner!.secrets;
    expect(Object.keys(secrets).sort()).toEqual(["ADMIN_TOKEN", "ENCRYPTION_KEY", "INSTANCE_TOKEN_SECRET", "METRICS_TOKEN"]);
    expect(secrets.ENCRYPTION_KEY!.base64Bytes).toBe(32);
    expect(secrets.INSTANCE_TOKEN_SECRET!.base64Bytes).toBe(32);
    for (const s of Object.values(secrets)) expect(s.length).toBeGreaterThanOrEqual(43);
    expect(new Set(Object.values(secrets).map((s) => s.sha256)).size).toBe(4);
    expect(state.workers.edgerunner!.deployments.at(-1)!.vars.PUBLIC_URL).toBe(URL_);

    // The deploy config holds the database and the URL; the committed file is untouched.
    const generated = readFileSync(join(ws.dir, "wrangler.deploy.toml"), "utf8");
    expect(generated).toContain(`database_id = "${db.uuid}"`);
    expect(generated).toContain(`PUBLIC_URL = "${URL_}"`);
    expect(readFileSync(join(ws.dir, "wrangler.toml"), "utf8")).toContain('database_id = "00000000-0000-0000-0000-000000000000"');
    // Without --plan no plan is written: the coordinator takes its default (paid).
    expect(generated).not.toContain("CLOUDFLARE_PLAN");
    expect(state.workers.edgerunner!.deployments.at(-1)!.vars).toEqual({ PUBLIC_URL: URL_, LOG_LEVEL: "info" });
    expect(r.stdout).not.toContain("Free plan");

    // The token printed is the secret put, once; the profile holds it for the new URL.
    const token = /Admin token[^\n]*\n {2}(\S+)/.exec(r.stdout)![1]!;
    expect(sha(token)).toBe(secrets.ADMIN_TOKEN!.sha256);
    expect(r.stdout.split(token).length - 1).toBe(1);
    expect(r.stdout).toContain(`${URL_}/ui/setup`);
    expect(r.stdout).toContain("+ created D1 database edgerunner (id ");
    expect(ws.profiles()).toEqual({ current: "default", profiles: { default: { url: URL_, token } } });
  });

  it("--public-url deploys once with it; --database names the database; --no-save-profile saves none", async () => {
    const ws = workspace();
    const r = await ws.run(["setup", "--public-url", "https://ci.example.com/", "--database", "runners", "--no-save-profile"]);
    expect(r.code).toBe(0);
    expect(ws.profiles()).toBeUndefined();
    expect(r.stdout).toContain("Keep it in a password manager.");
    expect(changes(ws).filter((a) => a.startsWith("deploy"))).toHaveLength(1);
    expect(ws.state().workers.edgerunner!.deployments[0]!.vars.PUBLIC_URL).toBe("https://ci.example.com");
    expect(ws.state().databases.map((d) => d.name)).toEqual(["runners"]);
    expect(readFileSync(join(ws.dir, "wrangler.deploy.toml"), "utf8")).toContain('database_name = "runners"');
    // Run again without the flag: the URL given before stays, the workers.dev one does not replace it.
    ws.clearCalls();
    expect((await ws.run(["setup", "--database", "runners"])).code).toBe(0);
    expect(changes(ws).filter((a) => a.startsWith("deploy"))).toHaveLength(1);
    expect(ws.state().workers.edgerunner!.deployments.at(-1)!.vars.PUBLIC_URL).toBe("https://ci.example.com");
  });
});

describe("edgerunner setup, again", () => {
  it("changes nothing that exists: no database created, no secret put, no token printed", async () => {
    const ws = workspace();
    expect((await ws.run(["setup"])).code).toBe(0);
    const before = ws.state().workers.edgerunner!.secrets;
    ws.clearCalls();
    const r = await ws.run(["setup"]);
    expect(r.code).toBe(0);
    expect(changes(ws)).toEqual(["d1 migrations apply DB --remote -c wrangler.deploy.toml", "deploy -c wrangler.deploy.toml"]);
    expect(ws.state().workers.edgerunner!.secrets).toEqual(before);
    expect(r.stdout).toMatch(/✓ D1 database edgerunner \(id [0-9a-f-]+\) already exists/);
    expect(r.stdout).toContain("✓ secret ADMIN_TOKEN already set (kept)");
    expect(r.stdout).toContain("✓ D1 migrations: none pending");
    expect(r.stdout).not.toContain("Admin token");
  });

  it("repairs what is missing: a deleted secret is put alone, a deleted database is created and migrated", async () => {
    const ws = workspace();
    expect((await ws.run(["setup"])).code).toBe(0);
    const before = ws.state().workers.edgerunner!.secrets;
    ws.setState((s) => {
      delete s.workers.edgerunner!.secrets.METRICS_TOKEN;
      s.databases = [];
    });
    ws.clearCalls();
    const r = await ws.run(["setup"]);
    expect(r.code).toBe(0);
    const bulk = ws.calls().filter((c) => c.argv[0] === "secret" && c.argv[1] === "bulk");
    expect(bulk.map((c) => Object.keys(c.stdin!))).toEqual([["METRICS_TOKEN"]]);
    const after = ws.state().workers.edgerunner!.secrets;
    expect(after.ADMIN_TOKEN).toEqual(before.ADMIN_TOKEN);
    expect(after.METRICS_TOKEN!.sha256).not.toBe(before.METRICS_TOKEN!.sha256);
    const db = ws.state().databases[0]!;
    expect(ws.state().applied[db.uuid]).toContain("0000_init.sql");
    expect(readFileSync(join(ws.dir, "wrangler.deploy.toml"), "utf8")).toContain(`database_id = "${db.uuid}"`);
    // A new database with the old ENCRYPTION_KEY kept: no warning about sealed secrets.
    expect(r.stdout).not.toContain("ENCRYPTION_KEY was missing");
    expect(r.stdout).not.toContain("Admin token");
  });
});

describe("edgerunner setup --plan", () => {
  const FREE = { CLOUDFLARE_PLAN: "free", RECONCILE_INTERVAL_SECONDS: "120", ORPHAN_CHECK_SECONDS: "900" };
  const deployedVars = (ws: Workspace) => ws.state().workers.edgerunner!.deployments.at(-1)!.vars;

  it("free: deploys with the three vars, a line for each and one for why; later runs without --plan keep them", async () => {
    const ws = workspace();
    const r = await ws.run(["setup", "--plan", "free"]);
    expect(r.code).toBe(0);
    expect(deployedVars(ws)).toEqual({ PUBLIC_URL: URL_, LOG_LEVEL: "info", ...FREE });
    const lines = r.stdout.split("\n");
    const at = lines.indexOf(
      "+ wrote wrangler.deploy.toml (D1 edgerunner, PUBLIC_URL learned from the first deploy, CLOUDFLARE_PLAN free)",
    );
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 5)).toEqual([
      '+ set var CLOUDFLARE_PLAN = "free" (the per-invocation budgets the coordinator keeps to)',
      '+ set var RECONCILE_INTERVAL_SECONDS = "120" (the idle tick, default 30; nudges still reconcile at once)',
      '+ set var ORPHAN_CHECK_SECONDS = "900" (how often a scale set lists its machines at the cloud, default 300)',
      "    Free plan: every invocation stays within 50 subrequests and 50 D1 queries; the idle tick is 2 minutes." +
        " `edgerunner doctor` warns when this month's usage nears a Free plan limit.",
    ]);
    // A repair run without --plan does not turn a free deployment into a paid one.
    const again = await ws.run(["setup"]);
    expect(again.code).toBe(0);
    expect(deployedVars(ws)).toEqual({ PUBLIC_URL: URL_, LOG_LEVEL: "info", ...FREE });
    expect(again.stdout).toContain(
      "✓ wrangler.deploy.toml is up to date (D1 edgerunner, PUBLIC_URL https://edgerunner.example.workers.dev, CLOUDFLARE_PLAN free)",
    );
    expect(again.stdout).not.toContain("set var");
  });

  it("paid after free: the plan becomes paid, the Free plan's intervals stay, and setup says so", async () => {
    const ws = workspace();
    expect((await ws.run(["setup", "--plan", "free"])).code).toBe(0);
    const r = await ws.run(["setup", "--plan", "paid"]);
    expect(r.code).toBe(0);
    expect(deployedVars(ws)).toEqual({ PUBLIC_URL: URL_, LOG_LEVEL: "info", ...FREE, CLOUDFLARE_PLAN: "paid" });
    expect(r.stdout).toContain('+ set var CLOUDFLARE_PLAN = "paid" (the per-invocation budgets the coordinator keeps to)\n');
    expect(r.stdout).toContain(
      '! RECONCILE_INTERVAL_SECONDS = "120" and ORPHAN_CHECK_SECONDS = "900" were chosen for the Free plan; --plan paid leaves them.',
    );
    expect(r.stdout).not.toContain("Free plan: every invocation");
    const generated = readFileSync(join(ws.dir, "wrangler.deploy.toml"), "utf8");
    expect(generated).toContain('CLOUDFLARE_PLAN = "paid"');
    expect(generated).not.toContain('CLOUDFLARE_PLAN = "free"');
  });

  it("paid on a first run: the plan alone, no notice", async () => {
    const ws = workspace();
    const r = await ws.run(["setup", "--plan", "paid", "--json"]);
    expect(r.code).toBe(0);
    expect(deployedVars(ws)).toEqual({ PUBLIC_URL: URL_, LOG_LEVEL: "info", CLOUDFLARE_PLAN: "paid" });
    expect(r.stderr).not.toContain("chosen for the Free plan");
    expect(JSON.parse(r.stdout)).toMatchObject({ plan: "paid", public_url: URL_ });
  });

  it("a bad value: names the two, exit 2, before anything runs; --dry-run says what free would set", async () => {
    const ws = workspace();
    const r = await ws.run(["setup", "--plan", "pro"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('edgerunner: --plan: one of free, paid, not "pro"\n');
    expect(ws.calls()).toEqual([]);
    const dry = await ws.run(["setup", "--plan", "free", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(
      '· would set var RECONCILE_INTERVAL_SECONDS = "120" (the idle tick, default 30; nudges still reconcile at once)\n',
    );
    expect(existsSync(join(ws.dir, "wrangler.deploy.toml"))).toBe(false);
  });
});

describe("npm run deploy after setup (scripts/deploy.mjs)", () => {
  it("deploys with the deploy config, regenerated from the committed wrangler.toml as it is now", async () => {
    const ws = workspace();
    expect((await ws.run(["setup"])).code).toBe(0);
    // The committed file changed since setup (a pull): the next deploy carries the change.
    const committed = join(ws.dir, "wrangler.toml");
    writeFileSync(committed, readFileSync(committed, "utf8").replace('LOG_LEVEL = "info"', 'LOG_LEVEL = "warn"'));
    ws.clearCalls();
    const r = await ws.script("scripts/deploy.mjs", []);
    expect(r.code).toBe(0);
    expect(argvOf(ws)).toEqual(["d1 migrations apply DB --remote -c wrangler.deploy.toml", "deploy -c wrangler.deploy.toml"]);
    expect(ws.state().workers.edgerunner!.deployments.at(-1)!.vars).toEqual({ PUBLIC_URL: URL_, LOG_LEVEL: "warn" });
  });
});

describe("edgerunner setup --dry-run", () => {
  it("prints every command it would run, secrets as placeholders, and changes nothing", async () => {
    const ws = workspace();
    const r = await ws.run(["setup", "--dry-run"]);
    expect(r.code).toBe(0);
    await expect(r.stdout).toMatchFileSnapshot("__snapshots__/setup-dry-run.txt");
    expect(changes(ws)).toEqual([]);
    expect(ws.state()).toEqual(freshState());
    expect(existsSync(join(ws.dir, "wrangler.deploy.toml"))).toBe(false);
  });
});

describe("edgerunner setup refuses", () => {
  it("not logged in: says to run wrangler login, changes nothing, exit 2", async () => {
    const ws = workspace({ ...freshState(), loggedIn: false });
    const r = await ws.run(["setup"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "edgerunner: not logged in to Cloudflare\nrun `npx wrangler login` (or set CLOUDFLARE_API_TOKEN), then run `npx edgerunner setup` again\n",
    );
    expect(argvOf(ws)).toEqual(["whoami --json"]);
  });

  it("outside a checkout: says where to run it, before running anything, exit 2", async () => {
    const ws = workspace();
    rmSync(join(ws.dir, "wrangler.toml"));
    const r = await ws.run(["setup"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("edgerunner: no wrangler.toml here");
    expect(r.stderr).toContain("run it from the root of an Edgerunner checkout");
    expect(ws.calls()).toEqual([]);
  });

  it("several accounts and none chosen: lists them; --account-id picks one", async () => {
    const accounts = [
      { id: "aaaa", name: "Personal" },
      { id: "bbbb", name: "Work" },
    ];
    const ws = workspace({ ...freshState(), accounts });
    const r = await ws.run(["setup"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--account-id ID");
    expect(r.stderr).toContain("  bbbb  Work");
    expect((await ws.run(["setup", "--account-id", "bbbb"])).code).toBe(0);
  });

  it("a wrangler step fails: stops there with wrangler's own words and what to do next, exit 1", async () => {
    const ws = workspace({ ...freshState(), failOn: "deploy" });
    const r = await ws.run(["setup"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("edgerunner: `wrangler deploy -c wrangler.deploy.toml` failed (exit 1)");
    expect(r.stderr).toContain("Authentication error [code: 10000]");
    expect(r.stderr).toContain("then run `npx edgerunner setup` again: it keeps what exists and repairs the rest");
    // The admin token went to Cloudflare before the failure: a later run cannot show it, so this one does.
    const token = /Admin token[^\n]*\n {2}(\S+)/.exec(r.stdout)![1]!;
    expect(sha(token)).toBe(ws.state().workers.edgerunner!.secrets.ADMIN_TOKEN!.sha256);
    ws.setState((s) => delete s.failOn);
    const again = await ws.run(["setup"]);
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain("Admin token");
  });
});
