/**
 * The GCE shim's startup script: what Google's guest environment runs at boot, its metadata
 * limits, and the bootstrap it carries run for real with bash and curl against a local stand-in
 * for the coordinator (the setup part needs root, so bash only parses it).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { METADATA_VALUE_LIMIT, metadataProblem, renderStartupScript } from "../../../shims/gce/startup-script.ts";
import type { BootstrapInstance } from "../../../src/providers/shim-protocol.ts";
import { bootstrapFromStartupScript, readStartupScript } from "../../fake-gce/startup-script-reader.ts";
import { garmBootstrap } from "../../fixtures/bootstrap-instance.ts";

const TOKEN = `ey.J'$(touch /tmp/pwned-gce)"x`;
const boot = (over: Partial<BootstrapInstance> = {}): BootstrapInstance => ({
  ...(garmBootstrap as BootstrapInstance),
  os_type: "linux",
  "instance-token": TOKEN,
  ...over,
});
const PEM = `-----BEGIN CERTIFICATE-----\n${`${"A".repeat(64)}\n`.repeat(10)}-----END CERTIFICATE-----\n`;

const rendered = (b: BootstrapInstance) => {
  const s = renderStartupScript(b);
  if (!s.ok) throw new Error(s.problem);
  return s.script;
};

describe("the startup script", () => {
  it("sets up the runner user, its keys, the CA bundle and packages once, then runs the bootstrap; bash parses it", () => {
    const script = rendered(
      boot({
        "ssh-keys": ["ssh-ed25519 AAAA key one", "ssh-rsa 'quoted' two"],
        "ca-cert-bundle": Buffer.from(PEM).toString("base64"),
        user_data_options: { disable_updates_on_boot: true, extra_packages: ["jq", "git"], enable_boot_debug: false },
      }),
    );
    expect(script).toMatch(/^#!\/bin\/bash\n/);
    expect(script).toContain("if [ -e /var/lib/edgerunner/bootstrapped ]; then exit 0; fi\n");
    expect(script).toContain("id 'runner' >/dev/null 2>&1 || useradd --create-home --shell /bin/bash 'runner'\n");
    expect(script).toContain(`printf '%s\\n' 'ssh-ed25519 AAAA key one' 'ssh-rsa '"'"'quoted'"'"' two' > "$home/.ssh/authorized_keys"`);
    expect(script).toContain('"$ca_dir/edgerunner-0.crt"');
    expect(script).toContain("  apt-get install -y -q 'jq' 'git'\n");
    expect(script).not.toContain("upgrade");
    expect(script).toMatch(/\nexec \/usr\/local\/sbin\/edgerunner-bootstrap\n$/);
    const parsed = spawnSync("bash", ["-n"], { input: script });
    expect(parsed.stderr.toString()).toBe("");
    expect(parsed.status).toBe(0);
    expect(readStartupScript({ items: [{ key: "startup-script", value: script }] })).toEqual({
      metadataUrl: garmBootstrap["metadata-url"],
      token: TOKEN,
    });
  });

  it("stays within GCE's 256 KiB per metadata value and 512 KB in all; Windows and values that break quoting are refused", () => {
    const many = Buffer.from(PEM.repeat(400)).toString("base64");
    expect(renderStartupScript(boot({ "ca-cert-bundle": many }))).toEqual({
      ok: false,
      problem: expect.stringMatching(
        new RegExp(`^the startup script would be \\d+ bytes, over GCE's ${METADATA_VALUE_LIMIT} per metadata value$`),
      ),
    });
    expect(metadataProblem([{ key: "startup-script", value: "x".repeat(600 * 1024) }])).toMatch(/over GCE's 524288 in all/);
    expect(renderStartupScript(boot({ os_type: "windows" }))).toEqual({
      ok: false,
      problem: "the GCE shim boots Linux runners only (os_type linux)",
    });
    expect(renderStartupScript(boot({ "metadata-url": "https://x\nrm -rf /" }))).toEqual({
      ok: false,
      problem: "metadata-url contains control characters",
    });
  });

  describe("the bootstrap it writes, run with bash and curl", () => {
    let server: Server;
    let dir: string;
    const seen: { url: string; auth: string | undefined }[] = [];
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "edgerunner-gce-startup-"));
      server = createServer((req, res) => {
        seen.push({ url: req.url ?? "", auth: req.headers.authorization });
        if (req.headers.authorization !== `Bearer ${TOKEN}`) return res.writeHead(401).end("unauthorized\n");
        res
          .writeHead(200, { "content-type": "text/plain" })
          .end(`#!/bin/bash\nprintf 'installed by %s\\n' "$BASH" > "$EDGERUNNER_TEST_OUT"\n`);
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    });
    afterAll(async () => {
      await new Promise((r) => server.close(r));
      rmSync(dir, { recursive: true, force: true });
    });

    it("fetches the install script with the instance token and runs it", async () => {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/metadata`;
      const script = join(dir, "edgerunner-bootstrap");
      writeFileSync(script, bootstrapFromStartupScript(rendered(boot({ "metadata-url": url })))!);
      const out = join(dir, "out");
      // Not spawnSync: the stand-in coordinator runs in this process and must keep answering.
      const child = spawn("bash", [script], { env: { ...process.env, EDGERUNNER_TEST_OUT: out }, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const status = await new Promise<number | null>((r) => child.on("exit", r));
      expect(stderr).toBe("");
      expect(status).toBe(0);
      expect(readFileSync(out, "utf8")).toMatch(/^installed by .*bash\n$/);
      expect(seen).toEqual([{ url: "/api/v1/metadata/install-script/?runAsUser=runner", auth: `Bearer ${TOKEN}` }]);
      expect(() => readFileSync("/tmp/pwned-gce")).toThrow();
    });
  });
});
