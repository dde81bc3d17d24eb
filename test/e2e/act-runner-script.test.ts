/**
 * The act_runner install script (src/bootstrap/act-runner-script.ts) run for real with bash and
 * curl: against a local HTTP server playing the coordinator's metadata and callback routes and a
 * download site serving a stub act_runner (and its published .sha256). The stub records how it
 * was called, writes a .runner as act_runner register does, and exits.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actRunnerInstallScript, defaultActRunnerUrl } from "../../src/bootstrap/act-runner-script.ts";

const TOKEN = "instance-token-for-act-runner";
const REGISTRATION = "gitea-registration-token-0001";
const STUB = `#!/usr/bin/env bash
{ printf 'act_runner'; printf '\\t%s' "$@"; printf '\\n'; } >> "$(dirname "$0")/calls.log"
if [ "$1" = register ]; then printf '{"id": 42, "uuid": "u-1", "name": "stub", "token": "t"}\\n' > .runner; fi
exit 0
`;
const STUB_SHA = createHash("sha256").update(STUB).digest("hex");

let work: string;
let server: Server;
let url: string;
let reports: { route: string; auth: string | undefined; body: string }[] = [];
let served: { registration: number; sha256: number } = { registration: 0, sha256: 0 };

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "edgerunner-act-runner-"));
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      if (path === "/dl/act_runner") return res.end(STUB);
      if (path === "/dl/act_runner.sha256") {
        served.sha256++;
        return res.end(`${STUB_SHA}  act_runner-0.2.13-linux-amd64\n`);
      }
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.statusCode = 401;
        return res.end();
      }
      if (path === "/api/v1/metadata/runner-registration-token/") {
        served.registration++;
        return res.end(REGISTRATION);
      }
      if (path.startsWith("/api/v1/callbacks/")) {
        reports.push({
          route: path.slice("/api/v1/callbacks/".length),
          auth: req.headers.authorization,
          body: Buffer.concat(chunks).toString(),
        });
        return res.end();
      }
      res.statusCode = 404;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(work, { recursive: true, force: true });
});

async function run(sha: string | null) {
  reports = [];
  served = { registration: 0, sha256: 0 };
  const dir = mkdtempSync(join(work, "runner-"));
  const script = join(dir, "..", `${dir.split("/").pop()}.sh`);
  writeFileSync(
    script,
    actRunnerInstallScript({
      instanceName: "edgerunner-gitea-1",
      metadataUrl: `${url}/api/v1/metadata`,
      callbackUrl: `${url}/api/v1/callbacks`,
      token: TOKEN,
      instanceUrl: "https://gitea.example.test",
      labels: ["ubuntu-latest", "linux"],
      downloadUrl: `${url}/dl/act_runner`,
      downloadSha256: sha,
      runAsUser: "runner",
    }),
  );
  const child = spawn("bash", [script], {
    env: { ...process.env, EDGERUNNER_RUNNER_DIR: dir, EDGERUNNER_RUNNER_USER: userInfo().username },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const calls = async () => {
    // act_runner daemon runs detached: wait for its line (bounded by attempts, not by time).
    for (let i = 0; i < 200 && !readFileSync(join(dir, "calls.log"), "utf8").includes("daemon"); i++)
      await new Promise((r) => setTimeout(r, 25));
    return readFileSync(join(dir, "calls.log"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split("\t"));
  };
  const statuses = reports
    .filter((r) => r.route === "status")
    .map((r) => JSON.parse(r.body) as { status: string; message: string; agent_id?: number });
  return { code, stderr, dir, calls, statuses };
}

describe("the act_runner install script", () => {
  it("downloads, checks the given checksum, registers ephemeral with the registration token, starts one job's daemon and reports idle", async () => {
    const r = await run(STUB_SHA);
    expect(r.code, r.stderr).toBe(0);
    expect(served).toEqual({ registration: 1, sha256: 0 });
    const calls = await r.calls();
    expect(calls[0]).toEqual([
      "act_runner",
      "register",
      "--no-interactive",
      "--ephemeral",
      "--instance",
      "https://gitea.example.test",
      "--token",
      REGISTRATION,
      "--name",
      "edgerunner-gitea-1",
      "--labels",
      "ubuntu-latest,linux",
    ]);
    expect(calls[1]).toEqual(["act_runner", "daemon", "--once"]);
    expect(r.statuses.at(-1)).toMatchObject({ status: "idle", agent_id: 42 });
    expect(
      r.statuses
        .map((s) => s.status)
        .slice(0, -1)
        .every((s) => s === "installing"),
    ).toBe(true);
    expect(reports.find((x) => x.route === "system-info/")?.body).toContain('"agent_id":42');
    expect(reports.every((x) => x.auth === `Bearer ${TOKEN}`)).toBe(true);
  });

  it("without a checksum, checks the one published beside the binary", async () => {
    const r = await run(null);
    expect(r.code, r.stderr).toBe(0);
    expect(served).toEqual({ registration: 1, sha256: 1 });
    expect(r.statuses.some((s) => s.message.includes("published checksum"))).toBe(true);
    expect(r.statuses.at(-1)?.status).toBe("idle");
  });

  it("refuses a binary whose checksum does not match, reports the failure and registers nothing", async () => {
    const r = await run("0".repeat(64));
    expect(r.code).toBe(1);
    expect(r.statuses.at(-1)).toMatchObject({ status: "failed", message: expect.stringContaining("checksum does not match") });
    expect(served.registration).toBe(0);
    expect(existsSync(join(r.dir, "calls.log"))).toBe(false);
  });
});

describe("the default act_runner release", () => {
  it("is Gitea's published binary for the machine's architecture", () => {
    expect(defaultActRunnerUrl("amd64")).toBe("https://dl.gitea.com/act_runner/0.2.13/act_runner-0.2.13-linux-amd64");
    expect(defaultActRunnerUrl("arm64")).toBe("https://dl.gitea.com/act_runner/0.2.13/act_runner-0.2.13-linux-arm64");
    expect(defaultActRunnerUrl("sparc")).toBeNull();
  });
});
