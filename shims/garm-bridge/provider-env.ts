import type { InterfaceVersion } from "./config.ts";

/**
 * The environment a GARM external provider runs with — and nothing else: GARM sets the
 * command's variables on an otherwise empty environment (no PATH, no HOME), then appends
 * variables of its own environment: those whose names start with one of its configured
 * `environment_variables` (prefixes, not whole names), and the proxy variables, always —
 * never a name starting with GARM. Which GARM_ variables a command gets depends on the
 * interface version:
 *
 *   v0.1.0: GARM_POOL_ID on CreateInstance and ListInstances only;
 *           GARM_INSTANCE_ID on Delete/Get/Start/Stop.
 *   v0.1.1: GARM_POOL_ID also on Delete/Get/Start/Stop, and
 *           GARM_POOL_EXTRASPECS (base64 of the pool's extra specs JSON) on every pool command.
 *
 * GARM never runs GetVersion or RemoveAllInstances (nor the v0.1.1 schema and validation
 * commands), so the bridge does not either: older providers answer any other command with an
 * error, and v0.1.0's RemoveAllInstances has no pool.
 */

export const garmCommands = ["CreateInstance", "DeleteInstance", "GetInstance", "ListInstances", "StartInstance", "StopInstance"] as const;
export type GarmCommand = (typeof garmCommands)[number];

/** Passed from GARM's own environment whatever its configuration says (as prefixes too). */
export const PROXY_VARIABLES = ["http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"] as const;

/** Commands that target one machine (GARM_INSTANCE_ID). */
const instanceCommands = new Set<GarmCommand>(["DeleteInstance", "GetInstance", "StartInstance", "StopInstance"]);
/** Commands that carry the pool in v0.1.0 already. */
const v010PoolCommands = new Set<GarmCommand>(["CreateInstance", "ListInstances"]);

export interface ProviderCall {
  command: GarmCommand;
  controllerId: string;
  /** The scale set id. */
  poolId: string;
  /** provider_id, or the instance name when no provider id exists (GARM's rule). */
  instanceId?: string;
  /** base64 of the pool's extra specs JSON, as received in X-Edgerunner-Pool-Extra-Specs. */
  extraSpecsBase64?: string;
}

export interface EnvSettings {
  interfaceVersion: InterfaceVersion;
  providerConfigFile: string;
  /** Configured variables, by value. */
  env: Record<string, string>;
  /** Prefixes of names taken from the bridge's own environment (GARM's `environment_variables`). */
  passEnv: string[];
}

export function providerEnv(call: ProviderCall, settings: EnvSettings, bridgeEnv: NodeJS.ProcessEnv): Record<string, string> {
  const v011 = settings.interfaceVersion === "v0.1.1";
  const out: Record<string, string> = {};
  // Configured variables first so the contract below always wins (names starting GARM_ are refused by the config anyway).
  const prefixes = [...settings.passEnv, ...PROXY_VARIABLES];
  for (const [name, value] of Object.entries(bridgeEnv)) {
    if (value === undefined || name.startsWith("GARM")) continue;
    if (prefixes.some((prefix) => name.startsWith(prefix))) out[name] = value;
  }
  Object.assign(out, settings.env);

  out.GARM_COMMAND = call.command;
  out.GARM_CONTROLLER_ID = call.controllerId;
  out.GARM_PROVIDER_CONFIG_FILE = settings.providerConfigFile;
  out.GARM_INTERFACE_VERSION = settings.interfaceVersion;
  if (instanceCommands.has(call.command)) out.GARM_INSTANCE_ID = call.instanceId ?? "";
  if (v011 || v010PoolCommands.has(call.command)) out.GARM_POOL_ID = call.poolId;
  if (v011) out.GARM_POOL_EXTRASPECS = call.extraSpecsBase64 ?? base64Json({});
  return out;
}

export function base64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64");
}
