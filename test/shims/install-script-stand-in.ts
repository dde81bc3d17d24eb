import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * What the cloud shims' bootstrap tests share (EC2 user data, GCE startup script, Hetzner user
 * data): a stand-in coordinator that answers the install script to one instance token, and the
 * shim's rendered bootstrap run with bash and curl against it.
 */
export interface InstallScriptStandIn {
  /** The metadata URL to render the bootstrap with. */
  metadataUrl: string;
  /** Every request it got: the path asked and the Authorization header. */
  seen: { url: string; auth: string | undefined }[];
  /** Runs `script` with bash; `installed` is what the install script wrote (null: it never ran). */
  run(script: string): Promise<{ status: number | null; stderr: string; installed: string | null }>;
  close(): Promise<void>;
}

export async function startInstallScriptStandIn(token: string): Promise<InstallScriptStandIn> {
  const dir = mkdtempSync(join(tmpdir(), "edgerunner-bootstrap-"));
  const seen: InstallScriptStandIn["seen"] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? "", auth: req.headers.authorization });
    if (req.headers.authorization !== `Bearer ${token}`) return res.writeHead(401).end("unauthorized\n");
    res.writeHead(200, { "content-type": "text/plain" }).end(`#!/bin/bash\nprintf 'installed by %s\\n' "$BASH" > "$EDGERUNNER_TEST_OUT"\n`);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  let runs = 0;
  return {
    metadataUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/metadata`,
    seen,
    async run(script) {
      const path = join(dir, `edgerunner-bootstrap-${++runs}`);
      const out = join(dir, `out-${runs}`);
      writeFileSync(path, script);
      // Not spawnSync: the stand-in coordinator runs in this process and must keep answering.
      const child = spawn("bash", [path], { env: { ...process.env, EDGERUNNER_TEST_OUT: out }, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const status = await new Promise<number | null>((r) => child.on("exit", r));
      let installed: string | null = null;
      try {
        installed = readFileSync(out, "utf8");
      } catch {}
      return { status, stderr, installed };
    },
    async close() {
      await new Promise((r) => server.close(r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
