/**
 * A checkout to run `edgerunner setup` in, for tests: a temporary folder with the repository's
 * real wrangler.toml files and migrations, the fake wrangler first on PATH (its account in
 * state.json there), and a profile file of its own. `run` starts the real CLI as a process.
 */
import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { FakeCall, FakeState } from "./wrangler.ts";

const repo = resolve(import.meta.dirname, "../..");

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Workspace {
  dir: string;
  state: () => FakeState;
  setState: (change: (s: FakeState) => void) => void;
  calls: () => FakeCall[];
  /** Forget the calls so far (to look at one run's). */
  clearCalls: () => void;
  /** The CLI with these arguments. */
  run: (args: string[], env?: Record<string, string>) => Promise<Run>;
  /** A script of the repository (scripts/deploy.mjs) run in the workspace, as npm would. */
  script: (path: string, args: string[]) => Promise<Run>;
  profiles: () => { current?: string; profiles: Record<string, { url?: string; token?: string }> } | undefined;
  remove: () => void;
}

export function freshState(): FakeState {
  return {
    loggedIn: true,
    email: "ops@example.com",
    accounts: [{ id: "0123456789abcdef0123456789abcdef", name: "Example" }],
    subdomain: "example",
    databases: [],
    workers: {},
    applied: {},
  };
}

export function makeWorkspace(state: FakeState = freshState()): Workspace {
  const dir = mkdtempSync(join(tmpdir(), "edgerunner-setup-"));
  copyFileSync(join(repo, "wrangler.toml"), join(dir, "wrangler.toml"));
  for (const shim of ["aws-ec2", "gce", "hetzner"]) {
    mkdirSync(join(dir, "shims", shim), { recursive: true });
    copyFileSync(join(repo, "shims", shim, "wrangler.toml"), join(dir, "shims", shim, "wrangler.toml"));
  }
  mkdirSync(join(dir, "migrations"));
  for (const f of readdirSync(join(repo, "migrations")).filter((f) => f.endsWith(".sql")))
    copyFileSync(join(repo, "migrations", f), join(dir, "migrations", f));
  const stateDir = join(dir, ".fake-wrangler");
  const bin = join(stateDir, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(stateDir, "state.json"), JSON.stringify(state));
  const wrapper = `#!/bin/sh\nexec "${process.execPath}" --no-warnings=ExperimentalWarning "${join(repo, "test/fake-wrangler/wrangler.ts")}" "$@"\n`;
  writeFileSync(join(bin, "wrangler"), wrapper);
  chmodSync(join(bin, "wrangler"), 0o755);
  const configFile = join(dir, ".config-home", "edgerunner", "config.json");
  const callsPath = join(stateDir, "calls.jsonl");

  const node = (args: string[], env: Record<string, string>) =>
    new Promise<Run>((done) => {
      // Only what the CLI needs: no EDGERUNNER_*, AWS_*, HCLOUD_* or GOOGLE_* of whoever runs the tests leaks in.
      const child = spawn(process.execPath, ["--no-warnings=ExperimentalWarning", ...args], {
        cwd: dir,
        env: { PATH: `${bin}:${process.env.PATH}`, HOME: dir, EDGERUNNER_CONFIG: configFile, FAKE_WRANGLER_STATE: stateDir, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c) => (stdout += c));
      child.stderr.on("data", (c) => (stderr += c));
      child.on("close", (code) => done({ code: code ?? -1, stdout, stderr }));
    });

  return {
    dir,
    state: () => JSON.parse(readFileSync(join(stateDir, "state.json"), "utf8")) as FakeState,
    setState: (change) => {
      const s = JSON.parse(readFileSync(join(stateDir, "state.json"), "utf8")) as FakeState;
      change(s);
      writeFileSync(join(stateDir, "state.json"), JSON.stringify(s));
    },
    calls: () =>
      existsSync(callsPath)
        ? readFileSync(callsPath, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as FakeCall)
        : [],
    clearCalls: () => rmSync(callsPath, { force: true }),
    profiles: () => (existsSync(configFile) ? JSON.parse(readFileSync(configFile, "utf8")) : undefined),
    run: (args, env = {}) => node([join(repo, "cli/bin/edgerunner.mjs"), ...args], env),
    script: (path, args) => node([join(repo, path), ...args], {}),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
