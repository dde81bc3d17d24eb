import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ProviderWorld } from "./harness";

/**
 * A provider that behaves like GARM's own contrib scripts (contrib/providers.d/openstack,
 * bash + jq, interface v0.1.0) over a stub cloud kept as one JSON file per server:
 *  - GetInstance and DeleteInstance exit 1, not 30, for a server that does not exist;
 *  - DeleteInstance looks the server up by id or name and ignores GARM_POOL_ID;
 *  - CreateInstance makes a new server whatever its name (OpenStack allows duplicate names)
 *    and reports it in status `error` when the cloud puts it in ERROR;
 *  - anything else (GetVersion…) is "Invalid GARM provider command", exit 1.
 * Its config file is a shell file it sources, as the contrib script sources its keystonerc.
 * Every call is recorded (command, pool, instance, and the names of the variables it got).
 */
export function contribProvider(world: ProviderWorld, opts: { serverStatus?: "ACTIVE" | "ERROR" } = {}) {
  const stateDir = join(world.dir, "contrib-cloud");
  const callsFile = join(world.dir, "contrib-calls.jsonl");
  const configFile = join(world.dir, "contrib-cloudrc");
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(configFile, `STATE_DIR=${stateDir}\nSERVER_STATUS=${opts.serverStatus ?? "ACTIVE"}\n`);
  const executable = world.script(
    "contrib-provider",
    `#!/bin/bash
set -e
source "$GARM_PROVIDER_CONFIG_FILE"
jq -nc --arg c "$GARM_COMMAND" --arg p "\${GARM_POOL_ID-}" --arg i "\${GARM_INSTANCE_ID-}" --arg e "$(env | cut -d= -f1 | sort | tr '\\n' ' ')" \\
  '{command: $c, pool: $p, instance: $i, env: ($e | split(" ") | map(select(. != "")))}' >> ${callsFile}

STATUS_MAP='{"ACTIVE":"running","SHUTOFF":"stopped","ERROR":"error"}'

function findServer() {
  for f in "$STATE_DIR"/*.json; do
    [ -e "$f" ] || continue
    if [ "$(jq -r --arg id "$1" '.id == $id or .name == $id' "$f")" == "true" ]; then echo "$f"; return 0; fi
  done
  echo "No server with a name or ID of '$1' exists." >&2
  return 1
}

function wire() {
  jq -c --argjson m "$STATUS_MAP" \\
    '{provider_id: .id, name: .name, os_type: "linux", os_name: "ubuntu", os_version: "22.04", os_arch: "amd64", status: $m[.status], pool_id: .pool}' "$@"
}

case "$GARM_COMMAND" in
  CreateInstance)
    BOOTSTRAP=$(cat)
    NAME=$(echo "$BOOTSTRAP" | jq -r .name)
    ID=$(cat /proc/sys/kernel/random/uuid)
    jq -nc --arg id "$ID" --arg name "$NAME" --arg pool "$GARM_POOL_ID" --arg status "$SERVER_STATUS" \\
      '{id: $id, name: $name, pool: $pool, status: $status}' > "$STATE_DIR/$ID.json"
    wire "$STATE_DIR/$ID.json"
    ;;
  GetInstance)
    F=$(findServer "$GARM_INSTANCE_ID")
    wire "$F"
    ;;
  DeleteInstance)
    F=$(findServer "$GARM_INSTANCE_ID")
    rm -f "$F"
    ;;
  ListInstances)
    for f in "$STATE_DIR"/*.json; do [ -e "$f" ] && cat "$f"; done | jq -s --arg pool "$GARM_POOL_ID" --argjson m "$STATUS_MAP" \\
      '[.[] | select(.pool == $pool) | {provider_id: .id, name: .name, status: $m[.status]}]'
    ;;
  *)
    echo "Invalid GARM provider command: \\"$GARM_COMMAND\\""
    exit 1
    ;;
esac
`,
  );
  return {
    executable,
    configFile,
    calls(): { command: string; pool: string; instance: string; env: string[] }[] {
      try {
        return readFileSync(callsFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
      } catch {
        return [];
      }
    },
    servers(): { id: string; name: string; pool: string; status: string }[] {
      try {
        return readdirSync(stateDir).map((f) => JSON.parse(readFileSync(join(stateDir, f), "utf8")));
      } catch {
        return [];
      }
    },
    /** A server someone made straight in the cloud. */
    seed(server: { id: string; name: string; pool: string; status?: string }) {
      writeFileSync(join(stateDir, `${server.id}.json`), JSON.stringify({ status: "ACTIVE", ...server }));
    },
  };
}
