import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BridgeConfig } from "../../../shims/garm-bridge/config";
import { type GarmBridge, startGarmBridge } from "../../../shims/garm-bridge/server";
import { signRequest } from "../../../src/providers/shim-signing";
import { garmBootstrap } from "../../fixtures/bootstrap-instance";

export const SECRET = "garm-bridge-test-secret-0123456789";
export const CONTROLLER = "5a3f8e1c-2b7d-4c1e-9f0a-6d4b3c2a1e0f";
export const POOL = "0f0c2a4e-8a4b-4f6e-9d55-2b8c1b1f5b1e";
export const EXTRA_SPECS = { disk_gb: 40, profile: "ci" };
export const EXTRA_SPECS_B64 = Buffer.from(JSON.stringify(EXTRA_SPECS)).toString("base64");

export interface Fault {
  exit?: number;
  stdout?: string;
  stderr?: string;
  sleep_ms?: number;
  hang?: boolean;
  child_hang?: boolean;
  huge_bytes?: number;
}

export interface RecordedCall {
  command: string;
  env: Record<string, string>;
  stdin: string;
  pid: number;
  started: number;
  ended: number;
  child_pid?: number;
  exit?: number;
}

/** A temporary directory holding a GARM provider executable (fake-provider.mjs), its config and its "cloud". */
export function makeProviderWorld() {
  const dir = mkdtempSync(join(tmpdir(), "edgerunner-bridge-"));
  const stateDir = join(dir, "state");
  const recordDir = join(dir, "records");
  mkdirSync(stateDir);
  mkdirSync(recordDir);
  const executable = join(dir, "garm-external-provider");
  const source = readFileSync(new URL("./fake-provider.mjs", import.meta.url), "utf8");
  writeFileSync(executable, `#!${process.execPath}\n${source}`);
  chmodSync(executable, 0o755);
  const configFile = join(dir, "provider-config.json");
  let settings: { faults: Record<string, Fault>; create_sleep_ms?: number; sleep_ms?: number; fail_names?: string[] } = { faults: {} };
  const writeConfig = () => writeFileSync(configFile, JSON.stringify({ state_dir: stateDir, record_dir: recordDir, ...settings }));
  writeConfig();
  return {
    dir,
    executable,
    configFile,
    /** Replaces the provider's misbehaviour (read by every call). */
    configure(next: { faults?: Record<string, Fault>; create_sleep_ms?: number; sleep_ms?: number; fail_names?: string[] }) {
      settings = { faults: {}, ...next };
      writeConfig();
    },
    calls(): RecordedCall[] {
      try {
        return readFileSync(join(recordDir, "calls.jsonl"), "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l));
      } catch {
        return [];
      }
    },
    clearCalls() {
      rmSync(join(recordDir, "calls.jsonl"), { force: true });
    },
    /** Writes a script provider (e.g. a shell script) next to the fake and returns its path. */
    script(name: string, text: string) {
      const path = join(dir, name);
      writeFileSync(path, text);
      chmodSync(path, 0o755);
      return path;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
export type ProviderWorld = ReturnType<typeof makeProviderWorld>;

export interface TestBridge extends GarmBridge {
  logs: Record<string, unknown>[];
  rawLogs: string[];
}

export async function startTestBridge(
  world: ProviderWorld,
  overrides: Record<string, unknown> = {},
  environ: NodeJS.ProcessEnv = { PATH: "/usr/bin:/bin", HOME: "/root", BRIDGE_OWN_SECRET: "must-not-leak" },
): Promise<TestBridge> {
  const config = BridgeConfig.parse({
    port: 0,
    provider_executable: world.executable,
    provider_config_file: world.configFile,
    secret: SECRET,
    timeout_seconds: 10,
    ...overrides,
  });
  const rawLogs: string[] = [];
  const bridge = await startGarmBridge({
    config,
    environ,
    log: (event, fields = {}) => rawLogs.push(JSON.stringify({ event, ...fields })),
  });
  return Object.defineProperties(bridge, {
    rawLogs: { value: rawLogs },
    logs: { get: () => rawLogs.map((l) => JSON.parse(l) as Record<string, unknown>) },
  }) as TestBridge;
}

export interface SendOptions {
  secret?: string;
  /** Unix seconds. */
  ts?: number;
  headers?: Record<string, string | undefined>;
  unsigned?: boolean;
}

/** A request signed as the coordinator signs it, with the protocol's context headers. */
export async function send(bridge: { url: string }, method: string, route: string, body = "", opts: SendOptions = {}) {
  const url = new URL(bridge.url + route);
  const signature = opts.unsigned
    ? {}
    : await signRequest(
        opts.secret ?? SECRET,
        { method, pathWithQuery: url.pathname + url.search, body },
        (opts.ts ?? Math.floor(Date.now() / 1000)) * 1000,
      );
  const headers: Record<string, string> = {
    accept: "application/json",
    "x-edgerunner-controller-id": CONTROLLER,
    "x-edgerunner-pool-id": POOL,
    "x-edgerunner-pool-extra-specs": EXTRA_SPECS_B64,
    ...Object.fromEntries(Object.entries(signature).map(([k, v]) => [k.toLowerCase(), v])),
    ...(body ? { "content-type": "application/json" } : {}),
  };
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    if (v === undefined) delete headers[k.toLowerCase()];
    else headers[k.toLowerCase()] = v;
  }
  const res = await fetch(url, { method, headers, ...(body ? { body } : {}) });
  const text = await res.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  return { status: res.status, body: json, headers: res.headers };
}

/** GARM's BootstrapInstance fixture, as instance `name` of the bridge's pool. */
export function bootstrap(name: string, over: Record<string, unknown> = {}) {
  return {
    ...garmBootstrap,
    name,
    tools: [{ os: "linux", architecture: "x64", download_url: "https://example.invalid/runner.tgz", filename: "runner.tgz" }],
    "instance-token": `instance-token-${name}-very-secret`,
    extra_specs: EXTRA_SPECS,
    pool_id: POOL,
    ...over,
  };
}

export const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
