import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ProviderWorld } from "./harness";

/**
 * A provider that behaves like GARM's own contrib scripts (contrib/providers.d/openstack,
 * bash, interface v0.1.0) over a stub cloud kept as one file per server:
 *  - GetInstance and DeleteInstance exit 1, not 30, for a server that does not exist;
 *  - DeleteInstance looks the server up by id or name and ignores GARM_POOL_ID;
 *  - CreateInstance makes a new server whatever its name (OpenStack allows duplicate names)
 *    and reports it in status `error` when the cloud puts it in ERROR;
 *  - anything else (GetVersion, RemoveAllInstances…) exits 1, as the contrib script does.
 * Its config file is a shell file it sources, as the contrib script sources its keystonerc.
 * Plain bash and coreutils (the contrib script's jq is not needed for a stub). Every call is
 * recorded (command, pool, instance, and the names of the variables it got).
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
NAMES=$(env | cut -d= -f1 | sort | sed 's/.*/"&"/' | paste -sd, -)
printf '{"command":"%s","pool":"%s","instance":"%s","env":[%s]}\\n' "$GARM_COMMAND" "\${GARM_POOL_ID-}" "\${GARM_INSTANCE_ID-}" "$NAMES" >> ${callsFile}

# A server file holds one line: id name pool status.
function garmStatus() {
  case "$1" in ACTIVE) echo running ;; SHUTOFF) echo stopped ;; ERROR) echo error ;; *) echo unknown ;; esac
}

function findServer() {
  for f in "$STATE_DIR"/*; do
    [ -e "$f" ] || continue
    read -r id name pool status < "$f"
    if [ "$id" == "$1" ] || [ "$name" == "$1" ]; then echo "$f"; return 0; fi
  done
  echo "No server with a name or ID of '$1' exists." >&2
  return 1
}

function wire() {
  read -r id name pool status < "$1"
  printf '{"provider_id":"%s","name":"%s","os_type":"linux","os_name":"ubuntu","os_version":"22.04","os_arch":"amd64","status":"%s","pool_id":"%s"}' \\
    "$id" "$name" "$(garmStatus "$status")" "$pool"
}

case "$GARM_COMMAND" in
  CreateInstance)
    NAME=$(grep -o '"name" *: *"[^"]*"' | head -n 1 | sed 's/.*"\\([^"]*\\)"$/\\1/')
    ID=$(cat /proc/sys/kernel/random/uuid)
    echo "$ID $NAME $GARM_POOL_ID $SERVER_STATUS" > "$STATE_DIR/$ID"
    wire "$STATE_DIR/$ID"
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
    OUT=""
    for f in "$STATE_DIR"/*; do
      [ -e "$f" ] || continue
      read -r id name pool status < "$f"
      [ "$pool" == "$GARM_POOL_ID" ] || continue
      OUT="$OUT\${OUT:+,}$(wire "$f")"
    done
    echo "[$OUT]"
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
        return readFileSync(callsFile, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l));
      } catch {
        return [];
      }
    },
    servers(): { id: string; name: string; pool: string; status: string }[] {
      return readdirSync(stateDir).map((f) => {
        const [id, name, pool, status] = readFileSync(join(stateDir, f), "utf8").trim().split(" ");
        return { id: id!, name: name!, pool: pool!, status: status! };
      });
    },
    /** A server someone made straight in the cloud. */
    seed(server: { id: string; name: string; pool: string; status?: string }) {
      writeFileSync(join(stateDir, server.id), `${server.id} ${server.name} ${server.pool} ${server.status ?? "ACTIVE"}\n`);
    },
  };
}
