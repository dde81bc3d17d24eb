/**
 * The EC2 shim's user data: what cloud-init and EC2Launch get, its 16 KB limit, and the Linux
 * bootstrap script run for real with bash and curl against a local stand-in for the coordinator.
 */

import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderUserData, USER_DATA_LIMIT } from "../../../shims/aws-ec2/user-data.ts";
import type { BootstrapInstance } from "../../../src/providers/shim-protocol.ts";
import { linuxBootstrapScript, readBootstrap, userDataText } from "../../fake-ec2/user-data-reader.ts";
import { garmBootstrap } from "../../fixtures/bootstrap-instance.ts";
import { type InstallScriptStandIn, startInstallScriptStandIn } from "../install-script-stand-in.ts";

const TOKEN = `ey.J'$(touch /tmp/pwned)"x`;
const boot = (over: Partial<BootstrapInstance> = {}): BootstrapInstance => ({
  ...(garmBootstrap as BootstrapInstance),
  "instance-token": TOKEN,
  ...over,
});

const PEM = (n: number) => `-----BEGIN CERTIFICATE-----\n${`${"A".repeat(63)}${n % 10}\n`.repeat(20)}-----END CERTIFICATE-----\n`;
const bundle = (count: number) => Buffer.from(Array.from({ length: count }, (_, i) => PEM(i)).join("")).toString("base64");

async function rendered(b: BootstrapInstance) {
  const u = await renderUserData(b);
  if (!u.ok) throw new Error(u.problem);
  return { ...u, base64: Buffer.from(u.bytes).toString("base64"), text: userDataText(Buffer.from(u.bytes).toString("base64")) };
}

describe("Linux (cloud-init)", () => {
  it("creates the runner user with the scale set's keys, installs extra packages, trusts the CA bundle, and carries the URL and token quoted", async () => {
    const u = await rendered(
      boot({
        "ssh-keys": ["ssh-ed25519 AAAA key one", 'ssh-rsa "quoted" two'],
        "ca-cert-bundle": bundle(1),
        user_data_options: { disable_updates_on_boot: true, extra_packages: ["jq", "git"], enable_boot_debug: false },
        proxy_config: { http_proxy: "http://proxy:3128", https_proxy: "", no_proxy: "169.254.169.254" },
      }),
    );
    expect(u.gzipped).toBe(false);
    expect(u.text).toMatch(/^#cloud-config\n/);
    expect(u.text).toContain('package_update: true\npackage_upgrade: false\npackages:\n  - "jq"\n  - "git"\n');
    expect(u.text).toContain(
      '  - name: runner\n    shell: /bin/bash\n    sudo: "ALL=(ALL) NOPASSWD:ALL"\n    lock_passwd: true\n    ssh_authorized_keys:\n      - "ssh-ed25519 AAAA key one"\n      - "ssh-rsa \\"quoted\\" two"\n',
    );
    expect(u.text).toContain("ca_certs:\n  trusted:\n    - |\n      -----BEGIN CERTIFICATE-----\n");
    const script = linuxBootstrapScript(u.text)!;
    expect(script).toContain(
      "export http_proxy='http://proxy:3128'\nexport HTTP_PROXY='http://proxy:3128'\nexport no_proxy='169.254.169.254'\n",
    );
    expect(readBootstrap(u.base64)).toEqual({ os: "linux", metadataUrl: garmBootstrap["metadata-url"], token: TOKEN });
  });

  describe("the bootstrap script, run with bash and curl", () => {
    let standIn: InstallScriptStandIn;
    beforeAll(async () => {
      standIn = await startInstallScriptStandIn(TOKEN);
    });
    afterAll(() => standIn.close());

    it("fetches the install script with the instance token and runs it", async () => {
      const u = await rendered(boot({ "metadata-url": standIn.metadataUrl }));
      const run = await standIn.run(linuxBootstrapScript(u.text)!);
      expect(run).toEqual({ status: 0, stderr: "", installed: expect.stringMatching(/^installed by .*bash\n$/) });
      expect(standIn.seen).toEqual([{ url: "/api/v1/metadata/install-script/?runAsUser=runner", auth: `Bearer ${TOKEN}` }]);
      // The token never reached a command line: the quoted value survived intact, nothing it "contains" ran.
      expect(() => readFileSync("/tmp/pwned")).toThrow();
    });
  });

  it("gzips user data over 16 KB, which cloud-init reads as is; too big even gzipped is refused", async () => {
    const big = await rendered(boot({ "ca-cert-bundle": bundle(20) }));
    expect(big.gzipped).toBe(true);
    expect(big.bytes.length).toBeLessThanOrEqual(USER_DATA_LIMIT);
    expect(readBootstrap(big.base64)?.token).toBe(TOKEN);
    const random = Buffer.from(
      Array.from(
        { length: 40 },
        () =>
          `-----BEGIN CERTIFICATE-----\n${Buffer.from(crypto.getRandomValues(new Uint8Array(700))).toString("base64")}\n-----END CERTIFICATE-----\n`,
      ).join(""),
    ).toString("base64");
    expect(await renderUserData(boot({ "ca-cert-bundle": random }))).toEqual({
      ok: false,
      problem: expect.stringMatching(/^the user data would be \d+ bytes even gzipped, over EC2's 16384$/),
    });
  });

  it("refuses values that could break out of their quoting or YAML block", async () => {
    expect(await renderUserData(boot({ "metadata-url": "https://x\n- evil" }))).toEqual({
      ok: false,
      problem: "metadata-url contains control characters",
    });
    expect(await renderUserData(boot({ "ssh-keys": ["ssh-ed25519 A\nruncmd: [reboot]"] }))).toEqual({
      ok: false,
      problem: "ssh key contains control characters",
    });
    expect(await renderUserData(boot({ "ca-cert-bundle": Buffer.from("not a certificate").toString("base64") }))).toEqual({
      ok: false,
      problem: "ca-cert-bundle holds no PEM certificate",
    });
  });
});

describe("Windows (EC2Launch)", () => {
  it("a <powershell> block that fetches the install script with the token; no gzip, so oversized is refused", async () => {
    const u = await rendered(boot({ os_type: "windows", "ca-cert-bundle": bundle(1) }));
    expect(u.text).toMatch(/^<powershell>\n/);
    expect(u.text).toMatch(/<\/powershell>\n<persist>false<\/persist>\n$/);
    expect(u.text).toContain(`$InstanceToken = 'ey.J''$(touch /tmp/pwned)"x'`);
    expect(u.text).toContain("Import-Certificate -FilePath $file -CertStoreLocation Cert:\\LocalMachine\\Root");
    expect(readBootstrap(u.base64)).toEqual({ os: "windows", metadataUrl: garmBootstrap["metadata-url"], token: TOKEN });
    expect(await renderUserData(boot({ os_type: "windows", "ca-cert-bundle": bundle(20) }))).toEqual({
      ok: false,
      problem: expect.stringMatching(/^the Windows user data would be \d+ bytes, over EC2's 16384$/),
    });
  });
});
