/**
 * The rendered forgejo-runner bootstrap script, run for real with bash and curl on this machine.
 * A local HTTP server stands in for the coordinator's metadata and callback routes (the routes
 * themselves are tested in the worker project) and serves a fake forgejo-runner (a shell stub
 * that records its arguments and the token file it was pointed at) with its `.sha256`, as
 * Forgejo's runner releases publish them.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgejoLinuxInstallScript, forgejoRunnerEnv } from "../../src/bootstrap/forgejo-linux-script.ts";

const TOKEN = "instance-token-abc";
const RUNNER_TOKEN = "e1f3d26e034687a2b6856c4c6c3d87a469ff3bea";
const UUID = "d4637a60-7fea-4075-a81c-7e4ae01bdf0d";
const HANDLE = "33ba7d51-59c6-44f8-9d2b-1b94f4033973";

/** The fake forgejo-runner: writes its arguments (one per line) and the token it read to files beside it. */
const RUNNER = `#!/usr/bin/env bash
dir="$(dirname "$0")"
printf '%s\\n' "$@" > "$dir/runner-args.log"
for ((i = 1; i <= $#; i++)); do
  if [ "\${!i}" = --token-url ]; then j=$((i + 1)); cat "\${!j#file:}" > "$dir/runner-token-seen.log"; fi
done
exit "\${FAKE_RUNNER_EXIT:-0}"
`;
const runnerSha = createHash("sha256").update(RUNNER).digest("hex");

let server: Server;
let base: string;
let work: string;
const reports: { path: string; auth: string | undefined; body: string }[] = [];
let publishChecksum = true;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "edgerunner-forgejo-e2e-"));
  server = createServer((req, res) => {
    const url = req.url ?? "/";
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const authorized = req.headers.authorization === `Bearer ${TOKEN}`;
      if (url === "/download/forgejo-runner") return res.end(RUNNER);
      if (url === "/download/forgejo-runner.sha256")
        return publishChecksum ? res.end(`${runnerSha}  forgejo-runner-12.10.2-linux-amd64\n`) : res.writeHead(404).end();
      if (!authorized) return res.writeHead(401).end();
      if (url === "/api/v1/metadata/forgejo/runner-env")
        return res.end(forgejoRunnerEnv({ uuid: UUID, handle: HANDLE, forgejoUrl: "https://forgejo.example/", runnerId: 5 }));
      if (url === "/api/v1/metadata/forgejo/runner-token") return res.end(RUNNER_TOKEN);
      if (url.startsWith("/api/v1/callbacks")) {
        reports.push({ path: url, auth: req.headers.authorization, body: Buffer.concat(chunks).toString("utf8") });
        return res.end("{}");
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(work, { recursive: true, force: true });
});

async function run(name: string, over: { sha256?: string; exit?: number } = {}) {
  reports.length = 0;
  const dir = join(work, name);
  const script = forgejoLinuxInstallScript({
    instanceName: `fj-${name}`,
    metadataUrl: `${base}/api/v1/metadata`,
    callbackUrl: `${base}/api/v1/callbacks`,
    token: TOKEN,
    downloadUrl: `${base}/download/forgejo-runner`,
    downloadSha256: over.sha256 ?? "",
    runAsUser: userInfo().username,
    labels: ["linux", "docker:docker://node:22"],
  });
  // Asynchronous: the stand-in coordinator answers in this process.
  const child = spawn("bash", ["-c", script], {
    env: { ...process.env, EDGERUNNER_RUNNER_DIR: dir, FAKE_RUNNER_EXIT: String(over.exit ?? 0) },
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  child.stdout.resume();
  const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const r = { status, stderr };
  const statuses = reports.filter((x) => x.path.endsWith("/status")).map((x) => JSON.parse(x.body) as { status: string; message: string });
  return { ...r, dir, statuses };
}

describe("forgejo-runner bootstrap", () => {
  it("downloads and checks the runner against the release's checksum, then runs one-job for its handle with its token file", async () => {
    const r = await run("ok");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(readFileSync(join(r.dir, "runner-args.log"), "utf8").trim().split("\n")).toEqual([
      "one-job",
      "--url",
      "https://forgejo.example/",
      "--uuid",
      UUID,
      "--token-url",
      `file:${r.dir}/.runner-token`,
      "--handle",
      HANDLE,
      "--wait",
      "--label",
      "linux:host",
      "--label",
      "docker:docker://node:22",
    ]);
    expect(readFileSync(join(r.dir, "runner-token-seen.log"), "utf8")).toBe(RUNNER_TOKEN);
    // The token file is gone once the job is done.
    expect(spawnSync("test", ["-e", join(r.dir, ".runner-token")]).status).not.toBe(0);
    expect(reports.every((x) => x.auth === `Bearer ${TOKEN}`)).toBe(true);
    // Idle is the last report: after it the coordinator refuses the instance token (GARM's rule).
    expect(r.statuses.map((s) => s.status)).toEqual([...r.statuses.slice(0, -1).map(() => "installing"), "idle"]);
  });

  it("a job that fails ends the script as a passed one does (the job's result is Forgejo's), with no report after idle", async () => {
    const r = await run("job-fails", { sha256: runnerSha, exit: 3 });
    expect(r.status).toBe(0);
    expect(r.statuses.at(-1)).toMatchObject({ status: "idle" });
  });

  it("refuses a runner whose checksum does not match, and says so", async () => {
    const r = await run("bad-sum", { sha256: "0".repeat(64) });
    expect(r.status).not.toBe(0);
    expect(r.statuses.at(-1)).toMatchObject({ status: "failed", message: expect.stringMatching(/checksum does not match/) });
    expect(spawnSync("test", ["-e", join(r.dir, "runner-args.log")]).status).not.toBe(0);
  });

  it("without a checksum set or published, fails and says to set runner_download_sha256", async () => {
    publishChecksum = false;
    try {
      const r = await run("no-sum");
      expect(r.status).not.toBe(0);
      expect(r.statuses.at(-1)).toMatchObject({ status: "failed", message: expect.stringMatching(/runner_download_sha256/) });
    } finally {
      publishChecksum = true;
    }
  });
});
