import { commentSafe, shellQuote } from "../../src/bootstrap/quoting.ts";
import type { BootstrapInstance } from "../../src/providers/shim-protocol.ts";
import { caCertificates, linuxBootstrapScript, oneLine, RUN_AS_USER, UserDataProblem } from "../aws-ec2/user-data.ts";

/**
 * The `startup-script` metadata a GCE runner boots with. Google's guest environment runs it as
 * root at every boot, from every public Linux image (no cloud-init needed); only the first boot
 * does the work: the `runner` user (sudo, the scale set's SSH keys), the CA bundle, extra
 * packages, then the same bootstrap the EC2 shim uses (fetch the coordinator's install script
 * with the instance's token and run it). Every value is a single-quoted shell word. Pure.
 */

/** GCE's limits: a metadata value at most 256 KiB, all keys and values together at most 512 KB. */
export const METADATA_VALUE_LIMIT = 262144;
export const METADATA_TOTAL_LIMIT = 512 * 1024;
export const STARTUP_SCRIPT_KEY = "startup-script";
export const BOOTSTRAP_PATH = "/usr/local/sbin/edgerunner-bootstrap";
const MARKER = "/var/lib/edgerunner/bootstrapped";

export type StartupScript = { ok: true; script: string } | { ok: false; problem: string };

const encoder = new TextEncoder();

function setupLines(b: BootstrapInstance): string[] {
  const opts = b.user_data_options;
  const packages = (opts.extra_packages ?? []).map((p) => oneLine("extra package", p));
  const keys = (b["ssh-keys"] ?? []).map((k) => oneLine("ssh key", k));
  const certs = caCertificates(b);
  const user = shellQuote(RUN_AS_USER);
  const lines = [
    `id ${user} >/dev/null 2>&1 || useradd --create-home --shell /bin/bash ${user}`,
    `printf '%s ALL=(ALL) NOPASSWD:ALL\\n' ${user} > /etc/sudoers.d/edgerunner-runner`,
    "chmod 0440 /etc/sudoers.d/edgerunner-runner",
  ];
  if (keys.length)
    lines.push(
      `home=$(getent passwd ${user} | cut -d: -f6)`,
      'install -d -m 0700 -o runner -g runner "$home/.ssh"',
      `printf '%s\\n' ${keys.map(shellQuote).join(" ")} > "$home/.ssh/authorized_keys"`,
      'chown runner:runner "$home/.ssh/authorized_keys" && chmod 0600 "$home/.ssh/authorized_keys"',
    );
  if (certs.length) {
    // Debian/Ubuntu read /usr/local/share/ca-certificates; RHEL-likes the anchors directory.
    lines.push(
      "if command -v update-ca-certificates >/dev/null; then ca_dir=/usr/local/share/ca-certificates; else ca_dir=/etc/pki/ca-trust/source/anchors; fi",
      'mkdir -p "$ca_dir"',
    );
    lines.push(...certs.map((c, i) => `printf '%s' ${shellQuote(c)} > "$ca_dir/edgerunner-${i}.crt"`));
    lines.push("if command -v update-ca-certificates >/dev/null; then update-ca-certificates; else update-ca-trust; fi");
  }
  const upgrade = !opts.disable_updates_on_boot;
  if (packages.length || upgrade) {
    const list = packages.map(shellQuote).join(" ");
    lines.push(
      "if command -v apt-get >/dev/null; then",
      "  export DEBIAN_FRONTEND=noninteractive",
      "  apt-get update -q",
      ...(upgrade ? ["  apt-get upgrade -y -q"] : []),
      ...(packages.length ? [`  apt-get install -y -q ${list}`] : []),
      "elif command -v dnf >/dev/null; then",
      ...(upgrade ? ["  dnf upgrade -y -q"] : []),
      ...(packages.length ? [`  dnf install -y -q ${list}`] : []),
      "fi",
    );
  }
  return lines;
}

/** The startup script for a Linux BootstrapInstance, within GCE's metadata value limit. */
export function renderStartupScript(b: BootstrapInstance): StartupScript {
  if (b.os_type !== "linux") return { ok: false, problem: "the GCE shim boots Linux runners only (os_type linux)" };
  let text: string;
  try {
    const bootstrap = linuxBootstrapScript(b);
    text = [
      "#!/bin/bash",
      `# Edgerunner runner ${commentSafe(b.name)}: GCE runs this at every boot; the first one sets the machine up and starts the runner.`,
      "set -euo pipefail",
      `if [ -e ${MARKER} ]; then exit 0; fi`,
      `mkdir -p ${MARKER.slice(0, MARKER.lastIndexOf("/"))} && touch ${MARKER}`,
      ...setupLines(b),
      `printf '%s' ${shellQuote(bootstrap)} > ${BOOTSTRAP_PATH}`,
      `chmod 0700 ${BOOTSTRAP_PATH}`,
      `exec ${BOOTSTRAP_PATH}`,
      "",
    ].join("\n");
  } catch (err) {
    if (err instanceof UserDataProblem) return { ok: false, problem: err.message };
    throw err;
  }
  const size = encoder.encode(text).length;
  if (size > METADATA_VALUE_LIMIT)
    return { ok: false, problem: `the startup script would be ${size} bytes, over GCE's ${METADATA_VALUE_LIMIT} per metadata value` };
  return { ok: true, script: text };
}

/** Metadata items within GCE's total limit (keys and values), or the problem. */
export function metadataProblem(items: { key: string; value: string }[]): string | null {
  const total = items.reduce((n, i) => n + encoder.encode(i.key).length + encoder.encode(i.value).length, 0);
  return total > METADATA_TOTAL_LIMIT ? `the metadata would be ${total} bytes, over GCE's ${METADATA_TOTAL_LIMIT} in all` : null;
}
