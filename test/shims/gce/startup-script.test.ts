/**
 * The GCE shim's startup script: what Google's guest environment runs at boot, its metadata
 * limits, and the bootstrap it carries run for real with bash and curl against a local stand-in
 * for the coordinator (the setup part needs root, so bash only parses it).
 */

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { METADATA_VALUE_LIMIT, metadataProblem, renderStartupScript } from "../../../shims/gce/startup-script.ts";
import type { BootstrapInstance } from "../../../src/providers/shim-protocol.ts";
import { bootstrapFromStartupScript, readStartupScript } from "../../fake-gce/startup-script-reader.ts";
import { garmBootstrap } from "../../fixtures/bootstrap-instance.ts";
import { type InstallScriptStandIn, startInstallScriptStandIn } from "../install-script-stand-in.ts";

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
    let standIn: InstallScriptStandIn;
    beforeAll(async () => {
      standIn = await startInstallScriptStandIn(TOKEN);
    });
    afterAll(() => standIn.close());

    it("fetches the install script with the instance token and runs it", async () => {
      const run = await standIn.run(bootstrapFromStartupScript(rendered(boot({ "metadata-url": standIn.metadataUrl })))!);
      expect(run).toEqual({ status: 0, stderr: "", installed: expect.stringMatching(/^installed by .*bash\n$/) });
      expect(standIn.seen).toEqual([{ url: "/api/v1/metadata/install-script/?runAsUser=runner", auth: `Bearer ${TOKEN}` }]);
      expect(() => readFileSync("/tmp/pwned-gce")).toThrow();
    });
  });
});
