/**
 * The rendered Linux bootstrap script, run for real: bash and curl on this machine against the
 * coordinator under `wrangler dev`, the fake GitHub (which serves a runner package built here
 * from stubs) and the fake shim. The stubs (config.sh, run.sh, svc.sh) only record their
 * arguments; a `curl` wrapper first on PATH records every call the script makes.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Coordinator, sleep, startCoordinator } from "../../bench/harness.mjs";
import { deliverWebhook, fakeWorld, type HarnessWorld } from "../../bench/harness-world.mjs";
import { FakeWorld } from "../fake-github/control-client.ts";
import { type FakeGithub, startFakeGithub } from "../fake-github/server.ts";
import { type FakeShim, startFakeShim } from "../fake-shim/server.ts";
import { queuedJobPayload } from "./queued-job.ts";

const FILENAME = "actions-runner-linux-x64-2.330.0.tar.gz";
const USER = userInfo().username;

let github: FakeGithub;
let shim: FakeShim;
let coordinator: Coordinator;
let work: string;
let tarball: string;
let curlWrapperDir: string;

/** A shell stub that appends its name and arguments (tab-separated) to calls.log next to it. */
const stub = (name: string) => `#!/usr/bin/env bash
{ printf '%s' ${name}; printf '\\t%s' "$@"; printf '\\n'; } >> "$(dirname "$0")/calls.log"
`;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "edgerunner-issue6-e2e-"));
  // The runner package: stubs only, packed like GitHub's (files at the top level).
  const pkg = join(work, "package");
  mkdirSync(join(pkg, "bin"), { recursive: true });
  for (const name of ["config.sh", "run.sh", "svc.sh"]) {
    writeFileSync(join(pkg, name), stub(name));
    chmodSync(join(pkg, name), 0o755);
  }
  writeFileSync(join(pkg, "bin", "Runner.Listener"), "stub\n");
  tarball = join(work, FILENAME);
  const tar = spawnSync("tar", ["czf", tarball, "-C", pkg, "."], { encoding: "utf8" });
  if (tar.status !== 0) throw new Error(`tar: ${tar.stderr}`);

  // curl, recording each call (one line of tab-separated arguments) before doing it.
  const realCurl = spawnSync("bash", ["-c", "command -v curl"], { encoding: "utf8" }).stdout.trim();
  if (!realCurl) throw new Error("curl is needed for this test");
  curlWrapperDir = join(work, "bin");
  mkdirSync(curlWrapperDir);
  writeFileSync(
    join(curlWrapperDir, "curl"),
    `#!/usr/bin/env bash
{ printf 'curl'; printf '\\t%s' "$@"; printf '\\n'; } >> "$EDGERUNNER_CURL_LOG"
exec ${realCurl} "$@"
`,
  );
  chmodSync(join(curlWrapperDir, "curl"), 0o755);

  [github, shim] = await Promise.all([startFakeGithub(), startFakeShim()]);
  coordinator = await startCoordinator({
    // The object acts on nudges at once (webhooks, idle, failed); no periodic work in between.
    NUDGE_DELAY_SECONDS: "0",
    RECONCILE_INTERVAL_SECONDS: "3600",
    ORPHAN_CHECK_SECONDS: "86400",
    SCALE_DOWN_IDLE_SECONDS: "86400",
  });
  await setUpScenarios();
}, 120_000);

afterAll(async () => {
  await coordinator?.stop();
  await Promise.all([github?.close(), shim?.stop()]);
  if (work) rmSync(work, { recursive: true, force: true });
});

interface Scenario {
  w: HarnessWorld;
  gh: FakeWorld;
  scaleSet: any;
  label: string;
}

/**
 * The runner packages GitHub lists (cached by the coordinator per repository for an hour, so
 * set once): a good one for x64, one with a wrong checksum for arm64, a missing one for arm.
 * Each scenario picks its package through its scale set's architecture.
 */
const WRONG_SHA = "0".repeat(64);
async function listPackages(gh: FakeWorld) {
  const content_base64 = readFileSync(tarball).toString("base64");
  await gh.addRunnerDownload({
    os: "linux",
    architecture: "x64",
    filename: FILENAME,
    content_base64,
    temp_download_token: `dl-${randomUUID()}`,
  });
  await gh.addRunnerDownload({
    os: "linux",
    architecture: "arm64",
    filename: "arm64-" + FILENAME,
    content_base64,
    sha256_checksum: WRONG_SHA,
  });
  await gh.addRunnerDownload({ os: "linux", architecture: "arm", filename: "arm-" + FILENAME, temp_download_token: null });
}

const SCENARIOS = {
  jit: { jit: true, arch: "amd64" },
  registration: { jit: false, arch: "amd64" },
  wrong_checksum: { jit: true, arch: "arm64" },
  missing_download: { jit: true, arch: "arm" },
} as const;
const scenarios = new Map<keyof typeof SCENARIOS, Scenario>();

/**
 * One repository and shim; a scale set per scenario, with its own label so its job goes to it
 * alone. All are made before any webhook: the coordinator caches a repository's scale sets for
 * webhook routing for a few seconds.
 */
async function setUpScenarios() {
  const w = await fakeWorld(coordinator, github.url, shim.url);
  const gh = new FakeWorld(w.world);
  await listPackages(gh);
  for (const [label, opts] of Object.entries(SCENARIOS)) {
    const scaleSet = await coordinator.api("POST", `/repositories/${w.repo.id}/scalesets`, {
      name: label.replace("_", "-"),
      provider_name: w.provider,
      labels: ["self-hosted", "linux", label],
      max_runners: 1,
      image: "ubuntu:24.04",
      flavor: "small",
      os_arch: opts.arch,
      jit_config_enabled: opts.jit,
      ...(opts.jit ? {} : { runner_group: "Default" }),
    });
    scenarios.set(label as keyof typeof SCENARIOS, { w, gh, scaleSet, label });
  }
}
const scenario = async (name: keyof typeof SCENARIOS) => scenarios.get(name)!;

let jobId = 7_000_000;
/** Queues a job the way GitHub does: a signed workflow_job webhook. */
async function queueJob({ w, label }: Scenario) {
  const payload = queuedJobPayload(jobId++);
  payload.workflow_job.labels = ["self-hosted", "linux", label];
  const res = await deliverWebhook(coordinator, w.webhookSecret, payload);
  if (!res.ok) throw new Error(`webhook: ${res.status} ${await res.text()}`);
}

async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** The machine the object asked the shim for, with its BootstrapInstance. */
const machineOf = (s: Scenario) =>
  waitFor("the shim to create a machine", async () => {
    const machines = (await (await fetch(`${s.w.shimControl}/instances`)).json()) as any[];
    return machines.find((m) => m.bootstrap && m.pool_id === s.scaleSet.id);
  });

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  dir: string;
  curlCalls: string[][];
  stubCalls: string[][];
  ms: number;
}

/** Fetches the instance's install script with its token, as cloud-init would, and runs it with bash. */
async function runInstallScript(boot: any): Promise<Run> {
  const dir = mkdtempSync(join(work, "runner-"));
  const log = join(dir, "..", `${dir.split("/").pop()}-curl.log`);
  const res = await fetch(`${boot["metadata-url"]}/install-script/`, { headers: { authorization: `Bearer ${boot["instance-token"]}` } });
  expect(res.status).toBe(200);
  const script = join(dir, "..", `${dir.split("/").pop()}-install.sh`);
  writeFileSync(script, await res.text());
  const started = Date.now();
  // Async: the fakes run in this process and must keep serving while the script runs.
  const child = spawn("bash", [script], {
    env: {
      ...process.env,
      PATH: `${curlWrapperDir}:${process.env.PATH}`,
      EDGERUNNER_CURL_LOG: log,
      EDGERUNNER_RUNNER_DIR: dir,
      EDGERUNNER_RUNNER_USER: USER,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const lines = (f: string) =>
    existsSync(f)
      ? readFileSync(f, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => l.split("\t"))
      : [];
  return { code, stdout, stderr, dir, curlCalls: lines(log), stubCalls: lines(join(dir, "calls.log")), ms: Date.now() - started };
}

/** "METHOD url" for each curl call, with the Authorization header it sent. */
function calls(run: Run) {
  return run.curlCalls.map((args) => {
    const url = args.find((a) => /^https?:\/\//.test(a))!;
    const h = args.indexOf("-H");
    const body = args.indexOf("--data-binary");
    return {
      method: args.includes("-X") ? args[args.indexOf("-X") + 1] : "GET",
      url,
      auth: h >= 0 ? args[h + 1] : null,
      body: body >= 0 ? JSON.parse(args[body + 1]!) : null,
    };
  });
}

const instance = (name: string) => coordinator.api("GET", `/instances/${name}`);
/** Runner-status transitions, oldest first: [to, reason]. */
const runnerReports = async (name: string) =>
  ((await instance(name)).transitions as any[])
    .filter((t) => t.field === "runner_status")
    .reverse()
    .map((t) => [t.to, t.reason]);

describe("the Linux install script, run for real", () => {
  it("turns a JIT machine into an idle runner, reporting every step", async () => {
    const s = await scenario("jit");
    await queueJob(s);
    const machine = await machineOf(s);
    const boot = machine.bootstrap;
    const name = machine.name as string;
    expect(boot).toMatchObject({ jit_config_enabled: true, labels: null, "metadata-url": `${coordinator.url}/api/v1/metadata` });
    const tool = boot.tools.find((t: any) => t.os === "linux" && t.architecture === "x64");

    const run = await runInstallScript(boot);
    console.log(JSON.stringify({ event: "e2e_install_script", scenario: "jit", exit: run.code, ms: run.ms }));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`runner ${name} installed`);

    const auth = `Authorization: Bearer ${boot["instance-token"]}`;
    const meta = boot["metadata-url"];
    const cb = boot["callback-url"];
    const installing = (message: string) => ({ method: "POST", url: `${cb}/status`, auth, body: { status: "installing", message } });
    expect(calls(run)).toEqual([
      installing(`downloading runner ${FILENAME}`),
      { method: "GET", url: tool.download_url, auth: `Authorization: Bearer ${tool.temp_download_token}`, body: null },
      installing("verifying runner checksum"),
      installing("unpacking runner"),
      installing("fetching runner configuration"),
      { method: "GET", url: `${meta}/credentials/runner`, auth, body: null },
      { method: "GET", url: `${meta}/credentials/credentials`, auth, body: null },
      { method: "GET", url: `${meta}/credentials/credentials_rsaparams`, auth, body: null },
      installing("installing runner service"),
      installing("starting runner service"),
      {
        method: "POST",
        url: `${cb}/system-info/`,
        auth,
        body: { os_name: expect.any(String), os_version: expect.any(String), agent_id: expect.any(Number) },
      },
      {
        method: "POST",
        url: `${cb}/status`,
        auth,
        body: { status: "idle", message: "runner successfully installed", agent_id: expect.any(Number) },
      },
    ]);

    // The JIT files on disk are exactly the ones GitHub issued for this runner.
    const issued = (await s.gh.state()).jit_configs[name]!;
    for (const file of [".runner", ".credentials", ".credentials_rsaparams"]) {
      expect(readFileSync(join(run.dir, file)), file).toEqual(Buffer.from(issued[file]!, "base64"));
    }
    const agentId = JSON.parse(Buffer.from(issued[".runner"]!, "base64").toString()).agentId;
    expect(existsSync(join(run.dir, FILENAME))).toBe(false);
    expect(existsSync(join(run.dir, "run.sh"))).toBe(true);
    expect(run.stubCalls).toEqual([
      ["svc.sh", "install", USER],
      ["svc.sh", "start"],
    ]);
    expect((await s.gh.state()).download_requests.filter((d) => d.filename === FILENAME)).toContainEqual({
      filename: FILENAME,
      authorization: `Bearer ${tool.temp_download_token}`,
      status: 200,
    });

    expect(await runnerReports(name)).toEqual([
      ["installing", `downloading runner ${FILENAME}`],
      ["installing", "verifying runner checksum"],
      ["installing", "unpacking runner"],
      ["installing", "fetching runner configuration"],
      ["installing", "installing runner service"],
      ["installing", "starting runner service"],
      ["idle", "runner successfully installed"],
    ]);
    const final = await instance(name);
    expect(final).toMatchObject({ status: "running", runner_status: "idle", agent_id: agentId });
    expect(calls(run).at(-1)!.body.agent_id).toBe(agentId);

    // The token is spent: the script cannot be fetched again.
    const again = await fetch(`${meta}/install-script/`, { headers: { authorization: `Bearer ${boot["instance-token"]}` } });
    expect(again.status).toBe(401);
  });

  it("registers with the one-time token and config.sh when JIT is off", async () => {
    const s = await scenario("registration");
    await queueJob(s);
    const machine = await machineOf(s);
    const boot = machine.bootstrap;
    const name = machine.name as string;
    expect(boot).toMatchObject({ jit_config_enabled: false, labels: [s.label, "linux", "self-hosted"].sort() });

    const run = await runInstallScript(boot);
    console.log(JSON.stringify({ event: "e2e_install_script", scenario: "registration_token", exit: run.code, ms: run.ms }));
    expect(run.code, run.stderr).toBe(0);
    const token = (await s.gh.state()).issued_registration_tokens.at(-1);
    expect(token).toEqual(expect.any(String));
    expect(run.stubCalls).toEqual([
      [
        "config.sh",
        "--unattended",
        "--url",
        "https://github.example.test/octo/app",
        "--token",
        token,
        "--name",
        name,
        "--labels",
        [s.label, "linux", "self-hosted"].sort().join(","),
        "--runnergroup",
        "Default",
        "--ephemeral",
        "--replace",
      ],
      ["svc.sh", "install", USER],
      ["svc.sh", "start"],
    ]);
    const meta = boot["metadata-url"];
    const urls = calls(run).map((c) => `${c.method} ${c.url}${c.body?.status ? ` ${c.body.status}` : ""}`);
    expect(urls.filter((u) => u.startsWith(`GET ${meta}`))).toEqual([`GET ${meta}/runner-registration-token/`]);
    expect(urls.at(-1)).toBe(`POST ${boot["callback-url"]}/status idle`);
    expect((await runnerReports(name)).map(([, reason]) => reason)).toEqual([
      `downloading runner ${FILENAME}`,
      "verifying runner checksum",
      "unpacking runner",
      "fetching registration token",
      "configuring runner",
      "installing runner service",
      "starting runner service",
      "runner successfully installed",
    ]);
    expect(await instance(name)).toMatchObject({ status: "running", runner_status: "idle" });
    for (const file of [".runner", ".credentials", ".credentials_rsaparams"]) expect(existsSync(join(run.dir, file))).toBe(false);
  });

  for (const broken of [
    { what: "a wrong checksum", scenario: "wrong_checksum" as const, message: `runner checksum does not match (expected ${WRONG_SHA})` },
    { what: "a missing download (404)", scenario: "missing_download" as const, message: "could not download the runner from" },
  ]) {
    it(`reports failed on ${broken.what}, exits non-zero, and the object deletes the machine`, async () => {
      const s = await scenario(broken.scenario);
      await queueJob(s);
      const machine = await machineOf(s);
      const name = machine.name as string;
      const run = await runInstallScript(machine.bootstrap);
      console.log(JSON.stringify({ event: "e2e_install_script", scenario: broken.what, exit: run.code, ms: run.ms }));
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(broken.message);
      const last = calls(run).at(-1)!;
      expect(last).toMatchObject({ method: "POST", url: `${machine.bootstrap["callback-url"]}/status`, body: { status: "failed" } });
      expect(last.body.message).toContain(broken.message);
      // Nothing was configured or installed.
      expect(run.stubCalls).toEqual([]);
      expect(calls(run).some((c) => c.url.includes("/credentials/"))).toBe(false);

      // `failed` sent it to deletion; the nudged object deletes the machine at the shim.
      const gone = await waitFor("the instance to be deleted", async () => {
        const i = await instance(name);
        return i.status === "deleted" ? i : null;
      });
      expect(gone.runner_status).toBe("failed");
      expect(gone.transitions.map((t: any) => t.to)).toEqual(expect.arrayContaining(["pending_delete", "deleting", "deleted"]));
      const machines = (await (await fetch(`${s.w.shimControl}/instances`)).json()) as any[];
      expect(machines.map((m) => m.name)).not.toContain(name);
    });
  }
});
