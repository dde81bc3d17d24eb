import { LINUX_SCRIPT_HELPERS } from "./linux-script";
import { commentSafe, shellQuote } from "./quoting";

/**
 * The Linux bootstrap of a Forgejo runner: download forgejo-runner (the scale set's
 * runner_download_url, or the default release for the machine's architecture), check its
 * SHA-256 (the scale set's runner_download_sha256, or the checksum file the release publishes
 * beside the binary), fetch the runner's registration from the coordinator, and run
 * `forgejo-runner one-job` for the one job the runner was made for (its handle), reporting each
 * step as the GitHub runner's script does. Needs bash, curl and sha256sum.
 *
 * forgejo-runner's `one-job` flags as Forgejo's runner autoscaling guide shows them (runner 12.8
 * or later): --url, --uuid, --token-url, --handle, --wait, --label. The token is handed over as a
 * file (`--token-url file:…`, the form the guide uses): forgejo-runner would not send the instance
 * token a coordinator URL needs, and a token in a URL would end up in logs.
 */

/** The default forgejo-runner release (docs/forges.md): Forgejo 15 needs 12.8 or later. */
export const FORGEJO_RUNNER_VERSION = "12.10.2";

/** Forgejo's runner releases publish `forgejo-runner-<version>-linux-<arch>` and its `.sha256` for amd64 and arm64. */
export function defaultForgejoRunnerUrl(osArch: string, version = FORGEJO_RUNNER_VERSION): string | null {
  const arch = osArch === "amd64" || osArch === "arm64" ? osArch : null;
  return arch && `https://code.forgejo.org/forgejo/runner/releases/download/v${version}/forgejo-runner-${version}-linux-${arch}`;
}

/**
 * A scale set label as forgejo-runner's `--label` wants it (`name:type://image`): a bare name runs
 * the job on the machine itself (`name:host`), since the machine is the job's own.
 */
export const runnerLabel = (label: string): string => (label.includes(":") ? label : `${label}:host`);

export interface ForgejoInstallScriptInput {
  instanceName: string;
  metadataUrl: string;
  callbackUrl: string;
  token: string;
  downloadUrl: string;
  /** Empty: the release's published checksum file (`<download url>.sha256`). */
  downloadSha256: string;
  runAsUser: string;
  labels: string[];
}

const BODY = String.raw`
RUNNER_USER="@{EDGERUNNER_RUNNER_USER:-$DEFAULT_RUNNER_USER}"
RUNNER_DIR="@{EDGERUNNER_RUNNER_DIR:-/home/$RUNNER_USER/forgejo-runner}"
@{HELPERS}report "downloading forgejo-runner"
mkdir -p "$RUNNER_DIR" || fail "could not create $RUNNER_DIR"
cd "$RUNNER_DIR"
curl -sS --fail -L --retry 5 --retry-delay 2 --retry-connrefused -o forgejo-runner "$DOWNLOAD_URL" \
  || fail "could not download forgejo-runner from $DOWNLOAD_URL"
if [ -z "$DOWNLOAD_SHA256" ]; then
  report "fetching the release's checksum"
  DOWNLOAD_SHA256="$(curl -sS --fail -L --retry 5 --retry-delay 2 --retry-connrefused "$DOWNLOAD_URL.sha256" | awk '{print $1; exit}')" || true
  [ -n "$DOWNLOAD_SHA256" ] || fail "no checksum published at $DOWNLOAD_URL.sha256: set the scale set's runner_download_sha256"
fi
report "verifying forgejo-runner checksum"
echo "$DOWNLOAD_SHA256  forgejo-runner" | sha256sum -c --status - || fail "forgejo-runner checksum does not match (expected $DOWNLOAD_SHA256)"
chmod +x forgejo-runner

report "fetching runner registration"
fetch forgejo/runner-env runner.env
fetch forgejo/runner-token .runner-token
chmod 600 .runner-token runner.env
# Shell assignments, quoted by the coordinator: RUNNER_UUID, JOB_HANDLE, FORGEJO_URL, RUNNER_ID.
. ./runner.env
chown -R "$RUNNER_USER" "$RUNNER_DIR" 2>/dev/null || true

args=(one-job --url "$FORGEJO_URL" --uuid "$RUNNER_UUID" --token-url "file:$RUNNER_DIR/.runner-token" --handle "$JOB_HANDLE" --wait)
for label in "@{LABELS[@]}"; do args+=(--label "$label"); done
call_home status "{\"status\":\"idle\",\"message\":\"forgejo-runner waiting for its job\",\"agent_id\":$RUNNER_ID}" \
  || echo "edgerunner: could not report the runner as up" >&2
trap - ERR
set +e
as_runner ./forgejo-runner "@{args[@]}"
code=$?
set -e
rm -f .runner-token
# Nothing more to report: the instance token serves the bootstrap only (after idle the coordinator
# refuses it). The scale set sees the end at Forgejo (the job leaves the list, the runner goes).
echo "edgerunner: forgejo runner $RUNNER_NAME finished (exit $code)"
`
  .replace("@{HELPERS}", () => LINUX_SCRIPT_HELPERS)
  .replaceAll("@{", "${");

export function forgejoLinuxInstallScript(i: ForgejoInstallScriptInput): string {
  const vars: [string, string][] = [
    ["METADATA_URL", i.metadataUrl],
    ["CALLBACK_URL", i.callbackUrl],
    ["TOKEN", i.token],
    ["RUNNER_NAME", i.instanceName],
    ["DOWNLOAD_URL", i.downloadUrl],
    ["DOWNLOAD_SHA256", i.downloadSha256],
    ["DEFAULT_RUNNER_USER", i.runAsUser],
  ];
  return [
    "#!/usr/bin/env bash",
    `# Edgerunner forgejo-runner bootstrap for ${commentSafe(i.instanceName)}. Rendered for this instance only: it holds its token.`,
    "set -Eeuo pipefail",
    "",
    ...vars.map(([k, v]) => `${k}=${shellQuote(v)}`),
    `LABELS=(${i.labels.map((l) => shellQuote(runnerLabel(l))).join(" ")})`,
    BODY,
  ].join("\n");
}

/** The runner's environment file (`forgejo/runner-env`): shell assignments the script sources. */
export function forgejoRunnerEnv(v: { uuid: string; handle: string; forgejoUrl: string; runnerId: number | null }): string {
  return [
    `RUNNER_UUID=${shellQuote(v.uuid)}`,
    `JOB_HANDLE=${shellQuote(v.handle)}`,
    `FORGEJO_URL=${shellQuote(v.forgejoUrl)}`,
    `RUNNER_ID=${v.runnerId === null ? "null" : String(Math.trunc(v.runnerId))}`,
    "",
  ].join("\n");
}
