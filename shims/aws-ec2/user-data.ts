import { commentSafe, psQuote, shellQuote } from "../../src/bootstrap/quoting.ts";
import type { BootstrapInstance } from "../../src/providers/shim-protocol.ts";

/**
 * The user data a runner machine boots with: no runner logic of its own, just enough to fetch
 * the coordinator's install script (`{metadata-url}/install-script/`) with the instance's token
 * and run it, the way GARM's providers do. Nothing secret lives in the AMI; the token is spent
 * once the runner reports idle, so a job that reads the user data back from the instance
 * metadata service finds a dead token. Pure, except gzip for oversized Linux user data.
 *
 * Linux: cloud-init (`#cloud-config`): the `runner` user (sudo, the scale set's SSH keys), extra
 * packages, the CA bundle, and a root-only bootstrap script run once. Windows: EC2Launch's
 * `<powershell>` block.
 */

/** EC2's limit on user data, before base64. */
export const USER_DATA_LIMIT = 16 * 1024;
export const RUN_AS_USER = "runner";

export type UserData = { ok: true; bytes: Uint8Array<ArrayBuffer>; gzipped: boolean } | { ok: false; problem: string };

const encoder = new TextEncoder();

// Values end up inside quoted strings and YAML blocks: one line of printable text, or refused.
export const oneLine = (what: string, v: string) => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  if (/[\x00-\x1f\x7f]/.test(v)) throw new UserDataProblem(`${what} contains control characters`);
  return v;
};

/** A value that cannot go into the user data; its message says which and why. */
export class UserDataProblem extends Error {}

function proxyLines(b: BootstrapInstance, line: (name: string, value: string) => string): string[] {
  const p = b.proxy_config;
  if (!p) return [];
  const out: string[] = [];
  for (const [name, value] of [
    ["http_proxy", p.http_proxy],
    ["https_proxy", p.https_proxy],
    ["no_proxy", p.no_proxy],
  ] as const) {
    if (!value) continue;
    out.push(line(name, oneLine(name, value)), line(name.toUpperCase(), value));
  }
  return out;
}

/** PEM certificates from the BootstrapInstance's base64 bundle (printable lines only). */
export function caCertificates(b: BootstrapInstance): string[] {
  const raw = b["ca-cert-bundle"];
  if (!raw) return [];
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(Uint8Array.from(atob(raw), (c) => c.charCodeAt(0)));
  } catch {
    throw new UserDataProblem("ca-cert-bundle is not base64 of UTF-8 text");
  }
  const certs = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (!certs.length) throw new UserDataProblem("ca-cert-bundle holds no PEM certificate");
  for (const c of certs) if (/[^\x20-\x7e\r\n]/.test(c)) throw new UserDataProblem("ca-cert-bundle has non-printable characters");
  return certs.map((c) => c.replace(/\r/g, ""));
}

/** The bootstrap script cloud-init runs once as root. Every value is a single-quoted assignment. */
export function linuxBootstrapScript(b: BootstrapInstance): string {
  return [
    "#!/bin/bash",
    `# Edgerunner runner ${commentSafe(b.name)}: fetches the coordinator's install script with this instance's token and runs it.`,
    "set -euo pipefail",
    `METADATA_URL=${shellQuote(oneLine("metadata-url", b["metadata-url"]))}`,
    `INSTANCE_TOKEN=${shellQuote(oneLine("instance-token", b["instance-token"]))}`,
    `RUN_AS_USER=${shellQuote(RUN_AS_USER)}`,
    ...proxyLines(b, (name, value) => `export ${name}=${shellQuote(value)}`),
    "script=$(mktemp)",
    // The token goes to curl as a header file, never on a command line other users could see.
    "curl --fail --silent --show-error --location --retry 30 --retry-delay 5 --retry-connrefused \\",
    `  -H @<(printf 'Authorization: Bearer %s\\n' "$INSTANCE_TOKEN") \\`,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion in the rendered script
    '  -o "$script" "${METADATA_URL%/}/install-script/?runAsUser=$RUN_AS_USER"',
    'exec bash "$script"',
    "",
  ].join("\n");
}

const indent = (text: string, spaces: number) =>
  text
    .split("\n")
    .map((l) => (l === "" ? "" : " ".repeat(spaces) + l))
    .join("\n");

/** JSON strings are valid YAML double-quoted scalars: nothing in a value can break the document. */
const yamlString = (v: string) => JSON.stringify(v);

export function linuxCloudConfig(b: BootstrapInstance): string {
  const opts = b.user_data_options;
  const packages = opts.extra_packages ?? [];
  const keys = b["ssh-keys"] ?? [];
  const certs = caCertificates(b);
  const lines = [
    "#cloud-config",
    `# Edgerunner runner ${commentSafe(b.name)}`,
    `package_update: ${packages.length > 0 || !opts.disable_updates_on_boot}`,
    `package_upgrade: ${!opts.disable_updates_on_boot}`,
  ];
  if (packages.length) lines.push("packages:", ...packages.map((p) => `  - ${yamlString(oneLine("extra package", p))}`));
  lines.push(
    "users:",
    "  - default",
    `  - name: ${RUN_AS_USER}`,
    "    shell: /bin/bash",
    '    sudo: "ALL=(ALL) NOPASSWD:ALL"',
    "    lock_passwd: true",
  );
  if (keys.length) lines.push("    ssh_authorized_keys:", ...keys.map((k) => `      - ${yamlString(oneLine("ssh key", k))}`));
  if (certs.length) lines.push("ca_certs:", "  trusted:", ...certs.map((c) => `    - |\n${indent(c, 6)}`));
  lines.push(
    "write_files:",
    "  - path: /usr/local/sbin/edgerunner-bootstrap",
    '    permissions: "0700"',
    "    owner: root:root",
    "    content: |",
    indent(linuxBootstrapScript(b), 6),
    "runcmd:",
    "  - [/usr/local/sbin/edgerunner-bootstrap]",
    "",
  );
  return lines.join("\n");
}

export function windowsUserData(b: BootstrapInstance): string {
  const certs = caCertificates(b);
  const lines = [
    "<powershell>",
    `# Edgerunner runner ${commentSafe(b.name)}: fetches the coordinator's install script with this instance's token and runs it.`,
    "$ErrorActionPreference = 'Stop'",
    `$MetadataUrl = ${psQuote(oneLine("metadata-url", b["metadata-url"]))}`,
    `$InstanceToken = ${psQuote(oneLine("instance-token", b["instance-token"]))}`,
    ...proxyLines(b, (name, value) => `$env:${name} = ${psQuote(value)}`),
  ];
  certs.forEach((c, i) => {
    lines.push(
      // A single-quoted PowerShell string may span lines; the PEM holds only printable ASCII.
      `$pem = ${psQuote(c)}`,
      `$file = Join-Path $env:TEMP 'edgerunner-ca-${i}.cer'`,
      "Set-Content -Path $file -Value $pem -Encoding ascii",
      "Import-Certificate -FilePath $file -CertStoreLocation Cert:\\LocalMachine\\Root | Out-Null",
    );
  });
  lines.push(
    "[Net.ServicePointManager]::SecurityProtocol = [Net.SecurityProtocolType]::Tls12",
    "$script = Join-Path $env:TEMP 'edgerunner-install.ps1'",
    "for ($i = 1; ; $i++) {",
    "  try {",
    "    Invoke-WebRequest -UseBasicParsing -Headers @{ Authorization = \"Bearer $InstanceToken\" } -Uri ($MetadataUrl.TrimEnd('/') + '/install-script/') -OutFile $script",
    "    break",
    "  } catch {",
    "    if ($i -ge 30) { throw }",
    "    Start-Sleep -Seconds 5",
    "  }",
    "}",
    "& powershell.exe -NoProfile -ExecutionPolicy Bypass -File $script",
    "exit $LASTEXITCODE",
    "</powershell>",
    "<persist>false</persist>",
    "",
  );
  return lines.join("\n");
}

async function gzip(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * The user data for a BootstrapInstance, within EC2's 16 KB. Linux user data over the limit
 * (a large CA bundle, many keys) is gzipped, which cloud-init reads as is; Windows cannot be.
 */
export async function renderUserData(b: BootstrapInstance): Promise<UserData> {
  let text: string;
  try {
    text = b.os_type === "windows" ? windowsUserData(b) : linuxCloudConfig(b);
  } catch (err) {
    if (err instanceof UserDataProblem) return { ok: false, problem: err.message };
    throw err;
  }
  const bytes = new Uint8Array(encoder.encode(text));
  if (bytes.length <= USER_DATA_LIMIT) return { ok: true, bytes, gzipped: false };
  if (b.os_type === "windows")
    return { ok: false, problem: `the Windows user data would be ${bytes.length} bytes, over EC2's ${USER_DATA_LIMIT}` };
  const packed = await gzip(bytes);
  if (packed.length <= USER_DATA_LIMIT) return { ok: true, bytes: packed, gzipped: true };
  return { ok: false, problem: `the user data would be ${packed.length} bytes even gzipped, over EC2's ${USER_DATA_LIMIT}` };
}

export function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
