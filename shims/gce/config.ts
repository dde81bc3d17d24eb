import { secondsSetting, shimSecrets } from "../common/shim-settings.ts";

/**
 * The GCE shim Worker's settings: secrets (`wrangler secret put`) and vars (wrangler.toml). Read
 * on every request (plain env values); a missing or bad one is a 500 that names it, never its value.
 */

export interface ShimEnv {
  /** The HMAC secret shared with the coordinator (16+ characters). */
  SHIM_SECRET?: string;
  /** Older secrets still accepted on requests while rotating, comma-separated. */
  SHIM_PREVIOUS_SECRETS?: string;
  /** The service account's key file (JSON), as `gcloud iam service-accounts keys create` writes it. */
  GCE_SERVICE_ACCOUNT_KEY?: string;
  /** The project to make machines in; default the key's project_id. */
  GCE_PROJECT?: string;
  /** Zones to try, comma-separated, when a scale set's extra_specs name none. */
  GCE_ZONES?: string;
  /** Default https://compute.googleapis.com/compute/v1/; a Private Service Connect endpoint or a test double. */
  GCE_ENDPOINT?: string;
  /** When set, requests from another coordinator are refused (403). */
  CONTROLLER_ID?: string;
  /** How long one create may keep trying further zones and waiting for GCE's operations (default 25: within the coordinator's default 30 s per call). */
  CREATE_DEADLINE_SECONDS?: string;
  /** Per GCE call (default 15). */
  GCE_TIMEOUT_SECONDS?: string;
}

export interface ServiceAccount {
  clientEmail: string;
  privateKeyPem: string;
  privateKeyId: string;
  tokenUri: string;
  projectId: string;
}

export interface ShimConfig {
  secrets: string[];
  account: ServiceAccount;
  project: string;
  zones: string[];
  endpoint: string;
  controllerId?: string;
  createDeadlineMs: number;
  callTimeoutMs: number;
}

export type ConfigResult = { ok: true; config: ShimConfig } | { ok: false; problems: string[] };

export const ZONE = /^[a-z]+-[a-z]+[0-9]+-[a-z]$/;
const PROJECT = /^[a-z][-a-z0-9]{4,28}[a-z0-9]$|^[a-z0-9.-]+:[a-z][-a-z0-9]{4,28}[a-z0-9]$/;

/** The key file's fields the shim needs; problems name the field, never a value. */
export function readServiceAccountKey(raw: string | undefined, problems: string[]): ServiceAccount | null {
  if (!raw) {
    problems.push("GCE_SERVICE_ACCOUNT_KEY must be set (the service account's JSON key file)");
    return null;
  }
  let k: Record<string, unknown>;
  try {
    k = JSON.parse(raw);
  } catch {
    problems.push("GCE_SERVICE_ACCOUNT_KEY is not JSON (put the whole key file)");
    return null;
  }
  const str = (f: string) => (typeof k[f] === "string" && k[f] !== "" ? (k[f] as string) : null);
  const missing = ["client_email", "private_key", "token_uri", "project_id"].filter((f) => !str(f));
  if (k.type !== "service_account") missing.unshift("type (service_account)");
  if (missing.length) {
    problems.push(`GCE_SERVICE_ACCOUNT_KEY lacks ${missing.join(", ")}: use a service account key file`);
    return null;
  }
  if (!str("private_key")!.includes("-----BEGIN PRIVATE KEY-----")) {
    problems.push("GCE_SERVICE_ACCOUNT_KEY's private_key is not a PKCS#8 PEM key");
    return null;
  }
  try {
    if (!/^https?:$/.test(new URL(str("token_uri")!).protocol)) throw new Error();
  } catch {
    problems.push("GCE_SERVICE_ACCOUNT_KEY's token_uri is not a URL");
    return null;
  }
  return {
    clientEmail: str("client_email")!,
    privateKeyPem: str("private_key")!,
    privateKeyId: str("private_key_id") ?? "",
    tokenUri: str("token_uri")!,
    projectId: str("project_id")!,
  };
}

export function readConfig(env: ShimEnv): ConfigResult {
  const problems: string[] = [];
  const secrets = shimSecrets(env, problems);
  const account = readServiceAccountKey(env.GCE_SERVICE_ACCOUNT_KEY, problems);
  const project = env.GCE_PROJECT || account?.projectId || "";
  if (account && !PROJECT.test(project)) problems.push("GCE_PROJECT must be a project id such as my-project-123");
  const zones = (env.GCE_ZONES ?? "")
    .split(",")
    .map((z) => z.trim())
    .filter(Boolean);
  if (zones.some((z) => !ZONE.test(z))) problems.push("GCE_ZONES must be zones such as us-central1-a, comma-separated");
  let endpoint = env.GCE_ENDPOINT || "https://compute.googleapis.com/compute/v1/";
  try {
    endpoint = new URL(endpoint).toString().replace(/\/*$/, "/");
  } catch {
    problems.push("GCE_ENDPOINT must be a URL");
  }
  const createDeadlineMs = secondsSetting(env.CREATE_DEADLINE_SECONDS, 25, 600, "CREATE_DEADLINE_SECONDS", problems);
  const callTimeoutMs = secondsSetting(env.GCE_TIMEOUT_SECONDS, 15, 120, "GCE_TIMEOUT_SECONDS", problems);
  if (problems.length || !account) return { ok: false, problems };
  return {
    ok: true,
    config: {
      secrets,
      account,
      project,
      zones,
      endpoint,
      controllerId: env.CONTROLLER_ID || undefined,
      createDeadlineMs,
      callTimeoutMs,
    },
  };
}
