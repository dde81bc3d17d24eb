/**
 * A fake `wrangler` for the tests of `edgerunner setup` (test/unit/cli/setup.test.ts): the
 * commands setup runs, answering as wrangler 4 does (formats read from node_modules/wrangler),
 * over an account kept in $FAKE_WRANGLER_STATE/state.json. Every call is appended to
 * calls.jsonl with its argv and, for `secret bulk`, its stdin with each value replaced by a
 * digest (sha256, length, the bytes it decodes to as base64): checkable, never stored.
 * Started by a `wrangler` shell wrapper the test puts first on PATH.
 */
import { createHash, randomUUID } from "node:crypto";
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

export interface SecretDigest {
  sha256: string;
  length: number;
  /** Bytes the value decodes to as standard base64, or null when it is not canonical base64. */
  base64Bytes: number | null;
}

export interface FakeWorker {
  secrets: Record<string, SecretDigest>;
  /** Each deploy: the vars it went out with. */
  deployments: { vars: Record<string, string> }[];
}

export interface FakeState {
  loggedIn: boolean;
  email: string;
  accounts: { id: string; name: string }[];
  subdomain: string;
  databases: { uuid: string; name: string }[];
  workers: Record<string, FakeWorker>;
  /** Applied migration file names, per database id. */
  applied: Record<string, string[]>;
  /** A command (`deploy`, `secret bulk`, …) that fails with an API error, to test how setup stops. */
  failOn?: string;
}

export interface FakeCall {
  argv: string[];
  stdin?: Record<string, SecretDigest>;
}

const stateDir = process.env.FAKE_WRANGLER_STATE!;
const statePath = join(stateDir, "state.json");
const state = JSON.parse(readFileSync(statePath, "utf8")) as FakeState;
const argv = process.argv.slice(2);
const save = () => writeFileSync(statePath, JSON.stringify(state, null, 2));
const out = (text: string) => process.stdout.write(`${text}\n`);
const fail = (text: string): never => {
  process.stderr.write(`\n✘ [ERROR] ${text}\n\n`);
  process.exit(1);
};

export const digest = (value: string): SecretDigest => {
  const decoded = Buffer.from(value, "base64");
  return {
    sha256: createHash("sha256").update(value).digest("hex"),
    length: value.length,
    base64Bytes: decoded.toString("base64") === value ? decoded.length : null,
  };
};

function readStdin(): string {
  try {
    return readFileSync(0, "utf8");
  } catch {
    return "";
  }
}

/** The few keys of a wrangler.toml the fake needs: the Worker's name, [vars], the D1 table. */
function readConfig(path: string) {
  const text = readFileSync(path, "utf8");
  const config = {
    name: "",
    vars: {} as Record<string, string>,
    d1: undefined as undefined | Record<string, string>,
    crons: [] as string[],
  };
  let table = "";
  for (const line of text.split("\n")) {
    const header = /^\s*\[\[?\s*([\w.]+)\s*\]\]?/.exec(line);
    if (header) {
      table = header[1]!;
      if (table === "d1_databases" && !config.d1) config.d1 = {};
      continue;
    }
    const crons = /^\s*crons\s*=\s*\[(.*)\]/.exec(line);
    if (table === "triggers" && crons) config.crons = JSON.parse(`[${crons[1]}]`) as string[];
    const kv = /^\s*([\w-]+)\s*=\s*"((?:[^"\\]|\\.)*)"/.exec(line);
    if (!kv) continue;
    const value = JSON.parse(`"${kv[2]}"`) as string;
    if (table === "" && kv[1] === "name") config.name = value;
    if (table === "vars") config.vars[kv[1]!] = value;
    if (table === "d1_databases" && config.d1 && !(kv[1]! in config.d1)) config.d1[kv[1]!] = value;
  }
  return config;
}

const option = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const configPath = resolve(option("-c") ?? option("--config") ?? "wrangler.toml");
const words = argv.filter((a, i) => !a.startsWith("-") && !["-c", "--config", "--format"].includes(argv[i - 1] ?? "")).slice(0, 3);
const command =
  words[0] === "d1" && words[1] === "migrations"
    ? "d1 migrations apply"
    : words.slice(0, words[0] === "d1" || words[0] === "secret" ? 2 : 1).join(" ");

const call: FakeCall = { argv };
const record = () => appendFileSync(join(stateDir, "calls.jsonl"), `${JSON.stringify(call)}\n`);

const requireLogin = () => {
  if (!state.loggedIn) fail("Not logged in.\n\nRun `wrangler login` to authenticate.");
};
if (state.failOn === command) {
  record();
  fail(
    `A request to the Cloudflare API (/accounts/${state.accounts[0]?.id}/workers/scripts) failed.\n\n  Authentication error [code: 10000]`,
  );
}

switch (command) {
  case "whoami": {
    record();
    if (!state.loggedIn) {
      out(JSON.stringify({ loggedIn: false }));
      process.exit(1);
    }
    out(
      JSON.stringify(
        { loggedIn: true, authType: "OAuth Token", email: state.email, accounts: state.accounts, tokenPermissions: [] },
        null,
        2,
      ),
    );
    break;
  }
  case "d1 list": {
    record();
    requireLogin();
    out(
      JSON.stringify(
        state.databases.map((d) => ({
          uuid: d.uuid,
          name: d.name,
          created_at: "2026-11-27T00:00:00.000Z",
          version: "production",
          num_tables: 0,
          file_size: 0,
        })),
        null,
        2,
      ),
    );
    break;
  }
  case "d1 create": {
    record();
    requireLogin();
    const name = words[2]!;
    if (state.databases.some((d) => d.name === name))
      fail(`A request to the Cloudflare API failed.\n\n  A database with that name already exists [code: 7502]`);
    const uuid = randomUUID();
    state.databases.push({ uuid, name });
    save();
    out(`✅ Successfully created DB '${name}' in region WEUR\nCreated your new D1 database.\n`);
    out("To access your new D1 Database in your Worker, add the following snippet to your configuration file:");
    out(`[[d1_databases]]\nbinding = "${name}"\ndatabase_name = "${name}"\ndatabase_id = "${uuid}"`);
    break;
  }
  case "d1 migrations apply": {
    record();
    requireLogin();
    const config = readConfig(configPath);
    const id = config.d1?.database_id ?? "";
    if (!state.databases.some((d) => d.uuid === id)) {
      fail(
        `A request to the Cloudflare API (/accounts/${state.accounts[0]?.id}/d1/database/${id}/query) failed.\n\n  The database ${id} could not be found [code: 7404]`,
      );
    }
    const dir = join(dirname(configPath), config.d1?.migrations_dir ?? "migrations");
    const all = readdirSync(dir)
      .filter((f) => f.endsWith(".sql"))
      .sort();
    state.applied[id] ??= [];
    const applied = state.applied[id];
    const pending = all.filter((f) => !applied.includes(f));
    if (!pending.length) {
      out("✅ No migrations to apply!");
      break;
    }
    out("Migrations to be applied:");
    out(`┌${"─".repeat(40)}┐\n│ name │\n${pending.map((p) => `│ ${p} │`).join("\n")}\n└${"─".repeat(40)}┘`);
    applied.push(...pending);
    save();
    out(`${pending.map((p) => `│ ${p} │ ✅ │`).join("\n")}`);
    break;
  }
  case "secret list": {
    record();
    requireLogin();
    const name = readConfig(configPath).name;
    const worker = state.workers[name];
    if (!worker) {
      fail(
        `Worker "${name}" not found.\n\nIf this is a new Worker, run \`wrangler deploy\` first to create it.\nOtherwise, check that the Worker name is correct and you're logged into the right account.`,
      );
    }
    out(
      JSON.stringify(
        Object.keys(worker!.secrets).map((s) => ({ name: s, type: "secret_text" })),
        null,
        "  ",
      ),
    );
    break;
  }
  case "secret bulk": {
    const values = JSON.parse(readStdin()) as Record<string, string>;
    call.stdin = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, digest(v)]));
    record();
    requireLogin();
    const name = readConfig(configPath).name;
    out(`🌀 Processing the secrets for the Worker "${name}"`);
    if (!state.workers[name]) {
      out(`? There doesn't seem to be a Worker called "${name}". Do you want to create a new Worker with that name and add secrets to it?`);
      out("🤖 Using fallback value in non-interactive context: yes");
      out(`🌀 Creating new Worker "${name}"...`);
      state.workers[name] = { secrets: {}, deployments: [] };
    }
    for (const [k, v] of Object.entries(values)) state.workers[name]!.secrets[k] = digest(v);
    save();
    for (const k of Object.keys(values)) out(`✨ Successfully created secret for key: ${k}`);
    out(`\nFinished processing secrets file:\n✨ ${Object.keys(values).length} secrets successfully created`);
    break;
  }
  case "deploy": {
    record();
    requireLogin();
    const config = readConfig(configPath);
    if (config.d1 && !state.databases.some((d) => d.uuid === config.d1!.database_id)) {
      fail(
        "You must use a real database in the database_id configuration. You can find your databases using 'wrangler d1 list', or read how to develop locally with D1 here: https://developers.cloudflare.com/d1/configuration/local-development",
      );
    }
    state.workers[config.name] ??= { secrets: {}, deployments: [] };
    const worker = state.workers[config.name]!;
    worker.deployments.push({ vars: config.vars });
    save();
    const url = `https://${config.name}.${state.subdomain}.workers.dev`;
    const targets = [url, ...config.crons.map((c) => `schedule: ${c}`)];
    out(`Total Upload: 512.00 KiB / gzip: 128.00 KiB\nUploaded ${config.name} (1.00 sec)\nDeployed ${config.name} triggers (0.50 sec)`);
    for (const t of targets) out(`  ${t}`);
    const versionId = randomUUID();
    out(`Current Version ID: ${versionId}`);
    const outputPath = process.env.WRANGLER_OUTPUT_FILE_PATH;
    if (outputPath) {
      const entry = {
        type: "deploy",
        version: 1,
        worker_name: config.name,
        version_id: versionId,
        targets,
        timestamp: new Date().toISOString(),
      };
      appendFileSync(outputPath, `${JSON.stringify(entry)}\n`);
    }
    break;
  }
  default:
    record();
    fail(`The fake wrangler does not know \`wrangler ${argv.join(" ")}\``);
}
