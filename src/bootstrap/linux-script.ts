import type { InstallScriptInput } from "./install-script";
import { commentSafe, shellQuote } from "./install-script";

/**
 * What every Linux bootstrap script shares (the GitHub runner's here, forgejo-runner's in
 * forgejo-linux-script.ts): the instance token header, JSON escaping, reports to the callback
 * routes (`report` a step, `fail` with a message), authenticated metadata fetches, and running
 * as the runner user or root. Expects METADATA_URL, CALLBACK_URL, TOKEN and RUNNER_USER set.
 */
export const LINUX_SCRIPT_HELPERS = String.raw`AUTH="Authorization: Bearer $TOKEN"

json_escape() {
  local s=$1
  s=@{s//\\/\\\\}
  s=@{s//\"/\\\"}
  s=@{s//$'\n'/ }
  s=@{s//$'\r'/ }
  s=@{s//$'\t'/ }
  printf '%s' "$s" | tr -d '[:cntrl:]'
}

# GARM's images post with curl's default (form) Content-Type; the coordinator reads JSON anyway.
call_home() { # $1: callback route, $2: JSON body
  curl -sS --fail --retry 5 --retry-delay 2 --retry-connrefused -X POST -H "$AUTH" --data-binary "$2" "$CALLBACK_URL/$1" >/dev/null
}

# The machine's OS and its runner's id ($1, or null) for the coordinator's record (GARM's system info).
send_system_info() {
  local os_name=linux os_version=
  if [ -r /etc/os-release ]; then
    os_name="$(. /etc/os-release && echo "@{NAME:-linux}")" || os_name=linux
    os_version="$(. /etc/os-release && echo "@{VERSION_ID:-}")" || os_version=
  fi
  call_home system-info/ "{\"os_name\":\"$(json_escape "$os_name")\",\"os_version\":\"$(json_escape "$os_version")\",\"agent_id\":$1}" \
    || echo "edgerunner: could not send system info" >&2
}

report() {
  call_home status "{\"status\":\"installing\",\"message\":\"$(json_escape "$1")\"}" || echo "edgerunner: could not report: $1" >&2
}

fail() {
  trap - ERR
  echo "edgerunner: $1" >&2
  call_home status "{\"status\":\"failed\",\"message\":\"$(json_escape "$1")\"}" || echo "edgerunner: could not report the failure" >&2
  exit 1
}

trap 'fail "bootstrap failed at line $LINENO"' ERR

fetch() { # $1: metadata route, $2: output file, $3: retries (default 5)
  curl -sS --fail --retry "@{3:-5}" --retry-delay 2 --retry-connrefused -H "$AUTH" -o "$2" "$METADATA_URL/$1" || fail "could not fetch $1"
}

# The runner refuses to configure as root; the service is installed as root.
as_runner() {
  if [ "$(id -u)" = 0 ] && [ "$RUNNER_USER" != root ]; then sudo -u "$RUNNER_USER" -- "$@"; else "$@"; fi
}
as_root() {
  if [ "$(id -u)" = 0 ] || ! command -v sudo >/dev/null 2>&1; then "$@"; else sudo -n -- "$@"; fi
}

`.replaceAll("@{", "${");

/**
 * The steps, the same for every instance. Written raw (backslashes are bash's), with `@{`
 * standing for bash's `${` so that no JavaScript interpolation can happen here: every value
 * an instance brings comes in through the quoted assignments at the top.
 */
const BODY = String.raw`
RUNNER_USER="@{EDGERUNNER_RUNNER_USER:-$DEFAULT_RUNNER_USER}"
RUNNER_DIR="@{EDGERUNNER_RUNNER_DIR:-/home/$RUNNER_USER/actions-runner}"
@{HELPERS}FILENAME="$(basename -- "$FILENAME")"
report "downloading runner $FILENAME"
mkdir -p "$RUNNER_DIR" || fail "could not create $RUNNER_DIR"
cd "$RUNNER_DIR"
download=(-sS --fail -L --retry 5 --retry-delay 2 --retry-connrefused -o "$FILENAME")
if [ -n "$DOWNLOAD_TOKEN" ]; then download+=(-H "Authorization: Bearer $DOWNLOAD_TOKEN"); fi
curl "@{download[@]}" "$DOWNLOAD_URL" || fail "could not download the runner from $DOWNLOAD_URL"
if [ -n "$DOWNLOAD_SHA256" ]; then
  report "verifying runner checksum"
  echo "$DOWNLOAD_SHA256  $FILENAME" | sha256sum -c --status - || fail "runner checksum does not match (expected $DOWNLOAD_SHA256)"
fi

report "unpacking runner"
tar xzf "$FILENAME" || fail "could not unpack the runner"
rm -f "$FILENAME"

if [ "$JIT_CONFIG" = true ]; then
  report "fetching runner configuration"
  # The first file may be minted now: in a burst the coordinator holds each try up to a minute
  # while the machine waits in line for GitHub's budget, then answers 503.
  fetch credentials/runner .runner 30
  fetch credentials/credentials .credentials
  fetch credentials/credentials_rsaparams .credentials_rsaparams
  chmod 600 .runner .credentials .credentials_rsaparams
  chown -R "$RUNNER_USER" "$RUNNER_DIR" 2>/dev/null || true
else
  report "fetching registration token"
  REGISTRATION_TOKEN="$(curl -sS --fail --retry 5 --retry-delay 2 --retry-connrefused -H "$AUTH" "$METADATA_URL/runner-registration-token/")" \
    || fail "could not fetch the registration token"
  chown -R "$RUNNER_USER" "$RUNNER_DIR" 2>/dev/null || true
  report "configuring runner"
  config=(--unattended --url "$REPO_URL" --token "$REGISTRATION_TOKEN" --name "$RUNNER_NAME" --labels "$RUNNER_LABELS")
  if [ -n "$RUNNER_GROUP" ]; then config+=(--runnergroup "$RUNNER_GROUP"); fi
  config+=(--ephemeral --replace)
  as_runner ./config.sh "@{config[@]}" || fail "could not configure the runner"
fi
AGENT_ID="$(grep -io '"agentId"[[:space:]]*:[[:space:]]*[0-9]*' .runner 2>/dev/null | grep -o '[0-9]*$' || true)"
[ -n "$AGENT_ID" ] || AGENT_ID=null

report "installing runner service"
as_root ./svc.sh install "$RUNNER_USER" || fail "could not install the runner service"
report "starting runner service"
as_root ./svc.sh start || fail "could not start the runner service"

send_system_info "$AGENT_ID"
trap - ERR
call_home status "{\"status\":\"idle\",\"message\":\"runner successfully installed\",\"agent_id\":$AGENT_ID}" \
  || { echo "edgerunner: could not report the runner as installed" >&2; exit 1; }
echo "edgerunner: runner $RUNNER_NAME installed"
`
  .replace("@{HELPERS}", () => LINUX_SCRIPT_HELPERS)
  .replaceAll("@{", "${");

/**
 * The Linux bootstrap: download the runner (bearer temp download token when given), verify
 * its SHA-256, put the JIT files in place (or register with the one-time registration token),
 * install and start the service, and report every step. Needs bash, curl, tar and sha256sum.
 */
export function linuxInstallScript(i: InstallScriptInput): string {
  const r = i.registration;
  const vars: [string, string][] = [
    ["METADATA_URL", i.metadataUrl],
    ["CALLBACK_URL", i.callbackUrl],
    ["TOKEN", i.token],
    ["RUNNER_NAME", i.instanceName],
    ["DOWNLOAD_URL", i.tool.download_url],
    ["DOWNLOAD_TOKEN", i.tool.temp_download_token ?? ""],
    ["DOWNLOAD_SHA256", i.tool.sha256_checksum ?? ""],
    ["FILENAME", i.tool.filename],
    ["DEFAULT_RUNNER_USER", i.runAsUser],
    ["JIT_CONFIG", r ? "false" : "true"],
    ["REPO_URL", r?.repoUrl ?? ""],
    ["RUNNER_LABELS", r?.labels.join(",") ?? ""],
    ["RUNNER_GROUP", r?.runnerGroup ?? ""],
  ];
  return [
    "#!/usr/bin/env bash",
    `# Edgerunner runner bootstrap for ${commentSafe(i.instanceName)}. Rendered for this instance only: it holds its token.`,
    "set -Eeuo pipefail",
    "",
    ...vars.map(([k, v]) => `${k}=${shellQuote(v)}`),
    BODY,
  ].join("\n");
}
