/**
 * The Hetzner shim's user data: cloud-init sent as a JSON string (Linux only), Hetzner's 32 KiB
 * limit, and the bootstrap script run for real with bash and curl against a local stand-in for
 * the coordinator, after the round trip through the create request's JSON.
 */

import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderUserData, USER_DATA_LIMIT } from "../../../shims/hetzner/user-data.ts";
import type { BootstrapInstance } from "../../../src/providers/shim-protocol.ts";
import { linuxBootstrapScript } from "../../fake-ec2/user-data-reader.ts";
import { garmBootstrap } from "../../fixtures/bootstrap-instance.ts";
import { type InstallScriptStandIn, startInstallScriptStandIn } from "../install-script-stand-in.ts";

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
    let standIn: InstallScriptStandIn;
    beforeAll(async () => {
      standIn = await startInstallScriptStandIn(TOKEN);
    });
    afterAll(() => standIn.close());

    it("fetches the install script with the instance token and runs it", async () => {
      const run = await standIn.run(linuxBootstrapScript(sent(boot({ "metadata-url": standIn.metadataUrl })))!);
      expect(run).toEqual({ status: 0, stderr: "", installed: expect.stringMatching(/^installed by .*bash\n$/) });
      expect(standIn.seen).toEqual([{ url: "/api/v1/metadata/install-script/?runAsUser=runner", auth: `Bearer ${TOKEN}` }]);
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
