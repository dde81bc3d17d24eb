import type { InterfaceVersion } from "./config.ts";

/**
 * The environment a GARM external provider runs with — and nothing else: GARM sets the
 * command's variables on an otherwise empty environment (no PATH, no HOME), then appends the
 * variables it was configured to pass. Which variables a command gets depends on the
 * interface version:
 *
 *   v0.1.0: GARM_POOL_ID on CreateInstance and ListInstances only;
 *           GARM_INSTANCE_ID on Delete/Get/Start/Stop.
 *   v0.1.1: GARM_POOL_ID also on Delete/Get/Start/Stop/RemoveAllInstances, and
 *           GARM_POOL_EXTRASPECS (base64 of the pool's extra specs JSON) on every pool command.
 */

export const garmCommands = [
  "CreateInstance",
  "DeleteInstance",
  "GetInstance",
  "ListInstances",
  "StartInstance",
  "StopInstance",
  "RemoveAllInstances",
  "GetVersion",
] as const;
export type GarmCommand = (typeof garmCommands)[number];

/** Commands that target one machine (GARM_INSTANCE_ID). */
const instanceCommands = new Set<GarmCommand>(["DeleteInstance", "GetInstance", "StartInstance", "StopInstance"]);
/** Commands that carry the pool in v0.1.0 already. */
const v010PoolCommands = new Set<GarmCommand>(["CreateInstance", "ListInstances"]);

export interface ProviderCall {
  command: GarmCommand;
  controllerId: string;
  /** The scale set id; absent only for GetVersion. */
  poolId?: string;
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
  /** Names taken from the bridge's own environment when present there. */
  passEnv: string[];
}

export function providerEnv(call: ProviderCall, settings: EnvSettings, bridgeEnv: NodeJS.ProcessEnv): Record<string, string> {
  const v011 = settings.interfaceVersion === "v0.1.1";
  const out: Record<string, string> = {};
  // Configured variables first so the contract below always wins (names starting GARM_ are refused by the config anyway).
  for (const name of settings.passEnv) {
    const value = bridgeEnv[name];
    if (value !== undefined) out[name] = value;
  }
  Object.assign(out, settings.env);

  out.GARM_COMMAND = call.command;
  out.GARM_CONTROLLER_ID = call.controllerId;
  out.GARM_PROVIDER_CONFIG_FILE = settings.providerConfigFile;
  out.GARM_INTERFACE_VERSION = settings.interfaceVersion;
  if (call.command === "GetVersion") return out;

  if (instanceCommands.has(call.command)) out.GARM_INSTANCE_ID = call.instanceId ?? "";
  if (v011 || v010PoolCommands.has(call.command)) out.GARM_POOL_ID = call.poolId ?? "";
  if (v011) out.GARM_POOL_EXTRASPECS = call.extraSpecsBase64 ?? base64Json({});
  return out;
}

export function base64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64");
}
