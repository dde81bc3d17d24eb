import { LINUX_SCRIPT_HELPERS } from "./linux-script";
import { commentSafe, shellQuote } from "./quoting";

/**
 * Gitea's runner, act_runner, for a Gitea scale set's Linux machines. Gitea publishes no
 * runner-download API: a scale set names its binary (`runner_download_url`, with
 * `runner_download_sha256`), or gets the release below, from Gitea's download site
 * (https://dl.gitea.com/act_runner/, as Gitea's act runner docs point to), whose binaries each
 * have a `.sha256` file beside them.
 */
export const ACT_RUNNER_VERSION = "0.2.13";
const ACT_RUNNER_ARCH: Record<string, string> = { amd64: "amd64", arm64: "arm64", arm: "arm-7", i386: "386" };

/** The default act_runner binary for a machine's architecture (GARM's names: amd64, arm64, arm, i386), or null if there is none. */
export function defaultActRunnerUrl(osArch: string, version = ACT_RUNNER_VERSION): string | null {
  const arch = ACT_RUNNER_ARCH[osArch];
  return arch ? `https://dl.gitea.com/act_runner/${version}/act_runner-${version}-linux-${arch}` : null;
}

export interface ActRunnerScriptInput {
  instanceName: string;
  metadataUrl: string;
  callbackUrl: string;
  /** The instance's token (bearer for the metadata and callback routes). */
  token: string;
  /** The Gitea instance's web URL: `act_runner register --instance`. */
  instanceUrl: string;
  labels: string[];
  downloadUrl: string;
  /** Hex SHA-256 of the binary; null: the `.sha256` file published beside the download is fetched and checked against. */
  downloadSha256: string | null;
  runAsUser: string;
}

/**
 * The steps (raw bash, `@{` for `${`). Registers ephemeral (act_runner register --ephemeral,
 * Gitea 1.24's ephemeral runners), so Gitea drops the runner after its one job, and runs
 * `daemon --once`, which exits after that job.
 */
const BODY = String.raw`
RUNNER_USER="@{EDGERUNNER_RUNNER_USER:-$DEFAULT_RUNNER_USER}"
RUNNER_DIR="@{EDGERUNNER_RUNNER_DIR:-/home/$RUNNER_USER/act_runner}"
@{HELPERS}report "downloading act_runner from $DOWNLOAD_URL"
mkdir -p "$RUNNER_DIR" || fail "could not create $RUNNER_DIR"
cd "$RUNNER_DIR"
curl -sS --fail -L --retry 5 --retry-delay 2 --retry-connrefused -o act_runner "$DOWNLOAD_URL" \
  || fail "could not download act_runner from $DOWNLOAD_URL"
if [ -z "$DOWNLOAD_SHA256" ]; then
  report "fetching the published checksum $DOWNLOAD_URL.sha256"
  DOWNLOAD_SHA256="$(curl -sS --fail -L --retry 5 --retry-delay 2 --retry-connrefused "$DOWNLOAD_URL.sha256" | awk '{print $1; exit}')" \
    || fail "could not fetch $DOWNLOAD_URL.sha256: set the scale set's runner_download_sha256"
fi
case "$DOWNLOAD_SHA256" in
  *[!0-9a-fA-F]* | "") fail "no usable SHA-256 for act_runner (got '$DOWNLOAD_SHA256')" ;;
esac
[ "@{#DOWNLOAD_SHA256}" = 64 ] || fail "no usable SHA-256 for act_runner (got '$DOWNLOAD_SHA256')"
report "verifying act_runner checksum"
echo "$DOWNLOAD_SHA256  act_runner" | sha256sum -c --status - || fail "act_runner checksum does not match (expected $DOWNLOAD_SHA256)"
chmod +x act_runner

report "fetching registration token"
REGISTRATION_TOKEN="$(curl -sS --fail --retry 5 --retry-delay 2 --retry-connrefused -H "$AUTH" "$METADATA_URL/runner-registration-token/")" \
  || fail "could not fetch the registration token"
chown -R "$RUNNER_USER" "$RUNNER_DIR" 2>/dev/null || true
report "registering act_runner (ephemeral)"
as_runner ./act_runner register --no-interactive --ephemeral --instance "$INSTANCE_URL" --token "$REGISTRATION_TOKEN" \
  --name "$RUNNER_NAME" --labels "$RUNNER_LABELS" || fail "could not register act_runner at $INSTANCE_URL"
# act_runner keeps its registration in .runner (JSON); its id is the runner's id at Gitea.
AGENT_ID="$(grep -o '"id"[[:space:]]*:[[:space:]]*[0-9]*' .runner 2>/dev/null | head -n 1 | grep -o '[0-9]*$' || true)"
[ -n "$AGENT_ID" ] || AGENT_ID=null

report "starting act_runner for one job"
# Detached, so this script ends and the machine's boot goes on; act_runner exits after its job.
as_runner setsid nohup ./act_runner daemon --once >"$RUNNER_DIR/act_runner.log" 2>&1 </dev/null &

send_system_info "$AGENT_ID"
trap - ERR
call_home status "{\"status\":\"idle\",\"message\":\"act_runner registered and started\",\"agent_id\":$AGENT_ID}" \
  || { echo "edgerunner: could not report the runner as installed" >&2; exit 1; }
echo "edgerunner: act_runner $RUNNER_NAME started"
`
  .replace("@{HELPERS}", () => LINUX_SCRIPT_HELPERS)
  .replaceAll("@{", "${");

/** The Linux bootstrap of a Gitea scale set's machine. Needs bash, curl, awk and sha256sum (and setsid, from util-linux). */
export function actRunnerInstallScript(i: ActRunnerScriptInput): string {
  const vars: [string, string][] = [
    ["METADATA_URL", i.metadataUrl],
    ["CALLBACK_URL", i.callbackUrl],
    ["TOKEN", i.token],
    ["RUNNER_NAME", i.instanceName],
    ["INSTANCE_URL", i.instanceUrl],
    ["RUNNER_LABELS", i.labels.join(",")],
    ["DOWNLOAD_URL", i.downloadUrl],
    ["DOWNLOAD_SHA256", i.downloadSha256 ?? ""],
    ["DEFAULT_RUNNER_USER", i.runAsUser],
  ];
  return [
    "#!/usr/bin/env bash",
    `# Edgerunner act_runner bootstrap for ${commentSafe(i.instanceName)}. Rendered for this instance only: it holds its token.`,
    "set -Eeuo pipefail",
    "",
    ...vars.map(([k, v]) => `${k}=${shellQuote(v)}`),
    BODY,
  ].join("\n");
}
