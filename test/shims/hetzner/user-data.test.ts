/**
 * The Hetzner shim's user data: cloud-init sent as a JSON string (Linux only), Hetzner's 32 KiB
 * limit, and the bootstrap script run for real with bash and curl against a local stand-in for
 * the coordinator, after the round trip through the create request's JSON.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderUserData, USER_DATA_LIMIT } from "../../../shims/hetzner/user-data.ts";
import type { BootstrapInstance } from "../../../src/providers/shim-protocol.ts";
import { linuxBootstrapScript } from "../../fake-ec2/user-data-reader.ts";
import { garmBootstrap } from "../../fixtures/bootstrap-instance.ts";

const TOKEN = `ey.J'$(touch /tmp/pwned-hetzner)"x`;
const boot = (over: Partial<BootstrapInstance> = {}): BootstrapInstance => ({
  ...(garmBootstrap as BootstrapInstance),
  os_type: "linux",
  "instance-token": TOKEN,
  ...over,
});

const PEM = (n: number) => `-----BEGIN CERTIFICATE-----\n${`${"A".repeat(63)}${n % 10}\n`.repeat(20)}-----END CERTIFICATE-----\n`;
const bundle = (count: number) => Buffer.from(Array.from({ length: count }, (_, i) => PEM(i)).join("")).toString("base64");

/** What Hetzner stores: the text as it came out of the create request's JSON. */
function sent(b: BootstrapInstance): string {
  const u = renderUserData(b);
  if (!u.ok) throw new Error(u.problem);
  return (JSON.parse(JSON.stringify({ user_data: u.text })) as { user_data: string }).user_data;
}

describe("Linux (cloud-init)", () => {
  it("is the cloud-config document with the runner user, the scale set's keys, and the URL and token quoted", () => {
    const text = sent(boot({ "ssh-keys": ["ssh-ed25519 AAAA key one"], "ca-cert-bundle": bundle(1) }));
    expect(text).toMatch(/^#cloud-config\n/);
    expect(text).toContain('  - name: runner\n    shell: /bin/bash\n    sudo: "ALL=(ALL) NOPASSWD:ALL"\n    lock_passwd: true\n');
    expect(text).toContain('    ssh_authorized_keys:\n      - "ssh-ed25519 AAAA key one"\n');
    expect(text).toContain("ca_certs:\n  trusted:\n");
    const script = linuxBootstrapScript(text)!;
    expect(script).toContain(`METADATA_URL='${garmBootstrap["metadata-url"]}'`);
    expect(script).toContain(`INSTANCE_TOKEN='ey.J'"'"'$(touch /tmp/pwned-hetzner)"x'`);
  });

  describe("the bootstrap script, run with bash and curl", () => {
    let server: Server;
    let dir: string;
    const seen: { url: string; auth: string | undefined }[] = [];
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "edgerunner-hetzner-userdata-"));
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
      writeFileSync(script, linuxBootstrapScript(sent(boot({ "metadata-url": url })))!);
      const out = join(dir, "out");
      // Not spawnSync: the stand-in coordinator runs in this process and must keep answering.
      const child = spawn("bash", [script], { env: { ...process.env, EDGERUNNER_TEST_OUT: out }, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const status = await new Promise<number | null>((r) => child.on("exit", r));
      expect({ status, stderr }).toEqual({ status: 0, stderr: "" });
      expect(readFileSync(out, "utf8")).toMatch(/^installed by .*bash\n$/);
      expect(seen).toEqual([{ url: "/api/v1/metadata/install-script/?runAsUser=runner", auth: `Bearer ${TOKEN}` }]);
      // The token never reached a command line: the quoted value survived intact, nothing it "contains" ran.
      expect(() => readFileSync("/tmp/pwned-hetzner")).toThrow();
    });
  });

  it("stays within Hetzner's 32 KiB, with no gzip to fall back on: over it is refused with what to trim", () => {
    const fits = renderUserData(boot({ "ca-cert-bundle": bundle(20) }));
    expect(fits.ok && new TextEncoder().encode(fits.text).length).toBeLessThanOrEqual(USER_DATA_LIMIT);
    expect(renderUserData(boot({ "ca-cert-bundle": bundle(30) }))).toEqual({
      ok: false,
      problem: expect.stringMatching(/^the user data would be \d+ bytes, over Hetzner's 32768 \(fewer SSH keys or a smaller CA bundle\)$/),
    });
  });

  it("refuses Windows, and values that could break out of their quoting or YAML block", () => {
    expect(renderUserData(boot({ os_type: "windows" }))).toEqual({
      ok: false,
      problem: "Hetzner Cloud runs Linux images only, not windows",
    });
    expect(renderUserData(boot({ "metadata-url": "https://x\n- evil" }))).toEqual({
      ok: false,
      problem: "metadata-url contains control characters",
    });
  });
});
