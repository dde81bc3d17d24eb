import { secondsSetting, shimSecrets } from "../common/shim-settings.ts";
import { LOCATION } from "./extra-specs.ts";

/**
 * The Hetzner shim Worker's settings: secrets (`wrangler secret put`) and vars (wrangler.toml).
 * Read on every request (they are plain env values); a missing or bad one is a 500 that names
 * it, never its value.
 */

export interface ShimEnv {
  /** The HMAC secret shared with the coordinator (16+ characters). */
  SHIM_SECRET?: string;
  /** Older secrets still accepted on requests while rotating, comma-separated. */
  SHIM_PREVIOUS_SECRETS?: string;
  /** A Hetzner Cloud API token of the project the runners live in, with Read & Write permission. */
  HCLOUD_TOKEN?: string;
  /** Default https://api.hetzner.cloud/v1; a test double otherwise. */
  HCLOUD_ENDPOINT?: string;
  /** When set, requests from another coordinator are refused (403). */
  CONTROLLER_ID?: string;
  /** How long one create may keep trying further locations and server types, and wait for its action (default 20). */
  CREATE_DEADLINE_SECONDS?: string;
  /** Per Hetzner call (default 10). */
  HCLOUD_TIMEOUT_SECONDS?: string;
  /** Whose server types and prices the flavor catalogue lists for a scale set without `locations` (default fsn1). */
  FLAVORS_LOCATION?: string;
}

export interface ShimConfig {
  secrets: string[];
  token: string;
  endpoint: string;
  controllerId?: string;
  createDeadlineMs: number;
  timeoutMs: number;
  flavorsLocation: string;
}

export type ConfigResult = { ok: true; config: ShimConfig } | { ok: false; problems: string[] };

export function readConfig(env: ShimEnv): ConfigResult {
  const problems: string[] = [];
  const secrets = shimSecrets(env, problems);
  // Hetzner's tokens are 64 printable characters; anything with spaces or control characters would break the header.
  if (!env.HCLOUD_TOKEN || !/^[\x21-\x7e]{16,}$/.test(env.HCLOUD_TOKEN))
    problems.push("HCLOUD_TOKEN must be set (an API token of the Hetzner Cloud project, Read & Write)");
  let endpoint = env.HCLOUD_ENDPOINT || "https://api.hetzner.cloud/v1";
  try {
    endpoint = new URL(endpoint).toString().replace(/\/+$/, "");
  } catch {
    problems.push("HCLOUD_ENDPOINT must be a URL");
  }
  const createDeadlineMs = secondsSetting(env.CREATE_DEADLINE_SECONDS, 20, 600, "CREATE_DEADLINE_SECONDS", problems);
  const timeoutMs = secondsSetting(env.HCLOUD_TIMEOUT_SECONDS, 10, 120, "HCLOUD_TIMEOUT_SECONDS", problems);
  const flavorsLocation = env.FLAVORS_LOCATION || "fsn1";
  if (!LOCATION.test(flavorsLocation)) problems.push("FLAVORS_LOCATION must be a Hetzner location such as fsn1");
  if (problems.length) return { ok: false, problems };
  return {
    ok: true,
    config: {
      secrets,
      token: env.HCLOUD_TOKEN!,
      endpoint,
      controllerId: env.CONTROLLER_ID || undefined,
      createDeadlineMs,
      timeoutMs,
      flavorsLocation,
    },
  };
}
