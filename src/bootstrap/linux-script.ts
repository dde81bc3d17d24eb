import type { InstallScriptInput } from "./install-script";
import { shellQuote } from "./install-script";

/**
 * The Linux bootstrap: download the runner, verify it, put the JIT files in place, install and
 * start the service, and report every step. Needs bash, curl, tar and sha256sum; nothing else.
 */
export function linuxInstallScript(i: InstallScriptInput): string {
  return `#!/usr/bin/env bash
# Edgerunner runner bootstrap for ${i.instanceName}. Rendered for this instance only.
set -euo pipefail

METADATA_URL=${shellQuote(i.metadataUrl)}
CALLBACK_URL=${shellQuote(i.callbackUrl)}
TOKEN=${shellQuote(i.token)}
DOWNLOAD_URL=${shellQuote(i.tool.download_url)}
DOWNLOAD_TOKEN=${shellQuote(i.tool.temp_download_token ?? "")}
DOWNLOAD_SHA256=${shellQuote(i.tool.sha256_checksum ?? "")}
FILENAME=${shellQuote(i.tool.filename)}
RUNNER_USER="\${EDGERUNNER_RUNNER_USER:-${i.runAsUser}}"
RUNNER_DIR="\${EDGERUNNER_RUNNER_DIR:-/home/\${RUNNER_USER}/actions-runner}"

json_escape() { printf '%s' "$1" | sed -e 's/\\\\/\\\\\\\\/g' -e 's/"/\\\\"/g' | tr -d '\\n\\r'; }

call_home() { # $1: route, $2: JSON body
  curl -sS --fail --retry 5 --retry-delay 2 --retry-connrefused -X POST \\
    -H "Authorization: Bearer \${TOKEN}" -d "$2" "\${CALLBACK_URL}/$1" >/dev/null \\
    || echo "edgerunner: could not reach the coordinator ($1)" >&2
}

report() { call_home status "{\\"status\\":\\"installing\\",\\"message\\":\\"$(json_escape "$1")\\"}"; }

fail() {
  trap - ERR
  call_home status "{\\"status\\":\\"failed\\",\\"message\\":\\"$(json_escape "$1")\\"}"
  echo "edgerunner: $1" >&2
  exit 1
}

trap 'fail "bootstrap failed at line \${LINENO}"' ERR

fetch() { # $1: metadata route, $2: output file
  curl -sS --fail --retry 5 --retry-delay 2 --retry-connrefused \\
    -H "Authorization: Bearer \${TOKEN}" -o "$2" "\${METADATA_URL}/$1" || fail "could not fetch $1"
}

report "downloading runner \${FILENAME}"
mkdir -p "\${RUNNER_DIR}"
cd "\${RUNNER_DIR}"
if [ -n "\${DOWNLOAD_TOKEN}" ]; then
  curl -sS --fail -L --retry 5 --retry-delay 2 -H "Authorization: Bearer \${DOWNLOAD_TOKEN}" -o "\${FILENAME}" "\${DOWNLOAD_URL}" || fail "could not download the runner"
else
  curl -sS --fail -L --retry 5 --retry-delay 2 -o "\${FILENAME}" "\${DOWNLOAD_URL}" || fail "could not download the runner"
fi
if [ -n "\${DOWNLOAD_SHA256}" ]; then
  report "verifying runner checksum"
  echo "\${DOWNLOAD_SHA256}  \${FILENAME}" | sha256sum -c --status - || fail "runner checksum does not match"
fi

report "unpacking runner"
tar xzf "\${FILENAME}" || fail "could not unpack the runner"
rm -f "\${FILENAME}"

report "fetching runner configuration"
fetch credentials/runner .runner
fetch credentials/credentials .credentials
fetch credentials/credentials_rsaparams .credentials_rsaparams
chmod 600 .credentials .credentials_rsaparams
chown -R "\${RUNNER_USER}" "\${RUNNER_DIR}" 2>/dev/null || true
AGENT_ID="$(grep -o '"agentId"[[:space:]]*:[[:space:]]*[0-9]*' .runner | grep -o '[0-9]*$' || true)"
[ -n "\${AGENT_ID}" ] || AGENT_ID=null

report "installing runner service"
./svc.sh install "\${RUNNER_USER}" || fail "could not install the runner service"
report "starting runner service"
./svc.sh start || fail "could not start the runner service"

OS_NAME="$(. /etc/os-release 2>/dev/null && echo "\${NAME:-linux}" || echo linux)"
OS_VERSION="$(. /etc/os-release 2>/dev/null && echo "\${VERSION_ID:-}" || true)"
call_home system-info "{\\"os_name\\":\\"$(json_escape "\${OS_NAME}")\\",\\"os_version\\":\\"$(json_escape "\${OS_VERSION}")\\",\\"agent_id\\":\${AGENT_ID}}"
trap - ERR
call_home status "{\\"status\\":\\"idle\\",\\"message\\":\\"runner successfully installed\\",\\"agent_id\\":\${AGENT_ID}}"
`;
}
