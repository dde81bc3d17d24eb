import { secondsSetting, shimSecrets } from "../common/shim-settings.ts";

/**
 * The shim Worker's settings: secrets (`wrangler secret put`) and vars (wrangler.toml). Read on
 * every request (they are plain env values); a missing or bad one is a 500 that names it,
 * never its value.
 */

export interface ShimEnv {
  /** The HMAC secret shared with the coordinator (16+ characters). */
  SHIM_SECRET?: string;
  /** Older secrets still accepted on requests while rotating, comma-separated. */
  SHIM_PREVIOUS_SECRETS?: string;
  AWS_ACCESS_KEY_ID?: string;
  AWS_SECRET_ACCESS_KEY?: string;
  /** For temporary credentials only. */
  AWS_SESSION_TOKEN?: string;
  AWS_REGION?: string;
  /** Default https://ec2.{region}.amazonaws.com; a VPC endpoint, another partition, or a test double. */
  EC2_ENDPOINT?: string;
  /** When set, requests from another coordinator are refused (403). */
  CONTROLLER_ID?: string;
  /** How long one create may keep trying further instance types and subnets (default 20). */
  CREATE_DEADLINE_SECONDS?: string;
  /** Per EC2 call (default 10). */
  EC2_TIMEOUT_SECONDS?: string;
}

export interface ShimConfig {
  secrets: string[];
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
  endpoint: string;
  controllerId?: string;
  createDeadlineMs: number;
  ec2TimeoutMs: number;
}

export type ConfigResult = { ok: true; config: ShimConfig } | { ok: false; problems: string[] };

export function readConfig(env: ShimEnv): ConfigResult {
  const problems: string[] = [];
  const secrets = shimSecrets(env, problems);
  if (!env.AWS_ACCESS_KEY_ID) problems.push("AWS_ACCESS_KEY_ID must be set");
  if (!env.AWS_SECRET_ACCESS_KEY) problems.push("AWS_SECRET_ACCESS_KEY must be set");
  const region = env.AWS_REGION ?? "";
  if (!/^[a-z]{2}(-[a-z]+)+-\d+$/.test(region)) problems.push("AWS_REGION must be a region such as eu-central-1");
  let endpoint = env.EC2_ENDPOINT || `https://ec2.${region}.amazonaws.com`;
  try {
    endpoint = new URL(endpoint).toString();
  } catch {
    problems.push("EC2_ENDPOINT must be a URL");
  }
  const createDeadlineMs = secondsSetting(env.CREATE_DEADLINE_SECONDS, 20, 600, "CREATE_DEADLINE_SECONDS", problems);
  const ec2TimeoutMs = secondsSetting(env.EC2_TIMEOUT_SECONDS, 10, 120, "EC2_TIMEOUT_SECONDS", problems);
  if (problems.length) return { ok: false, problems };
  return {
    ok: true,
    config: {
      secrets,
      accessKeyId: env.AWS_ACCESS_KEY_ID!,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY!,
      sessionToken: env.AWS_SESSION_TOKEN || undefined,
      region,
      endpoint,
      controllerId: env.CONTROLLER_ID || undefined,
      createDeadlineMs,
      ec2TimeoutMs,
    },
  };
}
