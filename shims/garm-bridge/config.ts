import { accessSync, constants, readFileSync } from "node:fs";
import { isAbsolute } from "node:path";
import { z } from "zod";

/**
 * The bridge's configuration: a JSON file (`--config`), flags on top of it, and the shared
 * secret from a file or the environment (never a flag: command lines are visible to every
 * user of the machine).
 */

export const interfaceVersions = ["v0.1.0", "v0.1.1"] as const;
export type InterfaceVersion = (typeof interfaceVersions)[number];

/** GARM ignores configured variables that would override its own contract; the bridge refuses them outright. */
function envNameProblem(n: string): string | null {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(n)) return `'${n}' is not a valid environment variable name`;
  if (n.toUpperCase().startsWith("GARM_")) return `'${n}': GARM_* variables are set by the bridge itself`;
  return null;
}
const envName = z.string().superRefine((n, ctx) => {
  const problem = envNameProblem(n);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

export const BridgeConfig = z
  .strictObject({
    /** Address to listen on. Loopback by default: put a TLS proxy in front to expose it. */
    host: z.string().min(1).default("127.0.0.1"),
    port: z.number().int().min(0).max(65535).default(8789),
    /** The path of the provider URL registered with the coordinator (`/lxd` for https://shim.example.com/lxd). */
    base_path: z
      .string()
      .regex(/^(\/[^/?#]+)*$/, "must be empty or start with / and have no trailing slash")
      .default(""),
    /** Absolute path of the GARM external provider executable. */
    provider_executable: z.string().refine(isAbsolute, "must be an absolute path"),
    /** Passed to the provider as GARM_PROVIDER_CONFIG_FILE; GARM passes "" when none is configured. */
    provider_config_file: z.string().default(""),
    interface_version: z.enum(interfaceVersions).default("v0.1.1"),
    /** HMAC key shared with the coordinator (at least 16 characters, as the coordinator requires). */
    secret: z.string().min(16, "must be at least 16 characters"),
    /** Older secrets still accepted on requests while a rotation is under way (callbacks use `secret`). */
    previous_secrets: z.array(z.string().min(16)).default([]),
    /** When set, requests for another controller are refused (403). */
    controller_id: z.string().min(1).optional(),
    /** Extra variables given to the provider, by value. */
    env: z
      .record(z.string(), z.string())
      .default({})
      .superRefine((env, ctx) => {
        for (const name of Object.keys(env)) {
          const problem = envNameProblem(name);
          if (problem) ctx.addIssue({ code: "custom", message: problem, path: [name] });
        }
      }),
    /** Name prefixes of the bridge's own environment variables handed to the provider (GARM's environment_variables: "OS_" passes OS_CLOUD…). */
    pass_env: z.array(envName).default([]),
    /** Per provider call; the process group is killed past it. Keep it under the coordinator's 30 s unless async. */
    timeout_seconds: z.number().positive().max(86_400).default(25),
    /** Provider processes running at once. */
    concurrency: z.number().int().min(1).max(1024).default(4),
    /** Calls waiting for a slot; past it the bridge answers 503. */
    max_queue: z.number().int().min(0).max(100_000).default(64),
    /** Cap on each of stdout and stderr; a provider that writes more is killed and its answer is malformed. */
    max_output_bytes: z
      .number()
      .int()
      .min(1024)
      .max(256 * 1024 * 1024)
      .default(4 * 1024 * 1024),
    /** Answer creates and deletes with 202 and report the outcome to callback_url. */
    async: z.boolean().default(false),
    /** `{PUBLIC_URL}/api/v1/providers/{provider name}/callbacks` of the coordinator. */
    callback_url: z.url({ protocol: /^https?$/ }).optional(),
    /** Delivery attempts per callback, 1 s doubling between them (capped at 60 s). */
    callback_attempts: z.number().int().min(1).max(50).default(8),
    callback_initial_delay_ms: z.number().int().min(1).max(60_000).default(1000),
    /**
     * Before CreateInstance, ask the provider whether the machine exists: `none` (GARM's way), `list`
     * (ListInstances) or `get` (GetInstance by name). See docs/garm-bridge.md.
     */
    create_lookup: z.enum(["none", "list", "get"]).default("none"),
    /**
     * The largest batch create (protocol v1.1) the bridge offers; 0: none. Unset: `concurrency`
     * when synchronous (a batch then takes about one create's time, within the coordinator's
     * timeout), `concurrency + max_queue` when async (every item is accepted at once and queued).
     */
    batch_create_max: z.number().int().min(0).max(1000).optional(),
  })
  .refine((c) => !c.async || c.callback_url, { message: "async needs callback_url", path: ["callback_url"] });
export type BridgeConfig = z.infer<typeof BridgeConfig>;

/** The largest batch create the bridge offers (0: none), see `batch_create_max`. */
export const batchCreateMax = (cfg: Pick<BridgeConfig, "batch_create_max" | "async" | "concurrency" | "max_queue">): number =>
  cfg.batch_create_max ?? (cfg.async ? cfg.concurrency + cfg.max_queue : cfg.concurrency);

export const SECRET_ENV = "EDGERUNNER_SHIM_SECRET";

export interface FlagValues {
  config?: string;
  host?: string;
  port?: string;
  "base-path"?: string;
  "provider-executable"?: string;
  "provider-config-file"?: string;
  "interface-version"?: string;
  "secret-file"?: string;
  "controller-id"?: string;
  env?: string[];
  "pass-env"?: string[];
  "timeout-seconds"?: string;
  concurrency?: string;
  "max-queue"?: string;
  async?: boolean;
  "callback-url"?: string;
}

export const flagOptions = {
  config: { type: "string" },
  host: { type: "string" },
  port: { type: "string" },
  "base-path": { type: "string" },
  "provider-executable": { type: "string" },
  "provider-config-file": { type: "string" },
  "interface-version": { type: "string" },
  "secret-file": { type: "string" },
  "controller-id": { type: "string" },
  env: { type: "string", multiple: true },
  "pass-env": { type: "string", multiple: true },
  "timeout-seconds": { type: "string" },
  concurrency: { type: "string" },
  "max-queue": { type: "string" },
  async: { type: "boolean" },
  "callback-url": { type: "string" },
} as const;

export class ConfigError extends Error {}

const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));

/**
 * Merges the config file, flags and secret sources into a validated config. `secret_file`
 * (file key or --secret-file) and EDGERUNNER_SHIM_SECRET are read here so the rest of the
 * bridge only ever sees the secret's value.
 */
export function loadConfig(flags: FlagValues, environ: NodeJS.ProcessEnv = process.env): BridgeConfig {
  let file: Record<string, unknown> = {};
  if (flags.config) {
    try {
      file = JSON.parse(readFileSync(flags.config, "utf8"));
    } catch (err) {
      throw new ConfigError(`cannot read config file ${flags.config}: ${(err as Error).message}`);
    }
    if (!file || typeof file !== "object" || Array.isArray(file)) throw new ConfigError(`${flags.config} must hold a JSON object`);
  }
  const merged: Record<string, unknown> = { ...file };
  const set = (key: string, value: unknown) => {
    if (value !== undefined) merged[key] = value;
  };
  set("host", flags.host);
  set("port", num(flags.port));
  set("base_path", flags["base-path"]);
  set("provider_executable", flags["provider-executable"]);
  set("provider_config_file", flags["provider-config-file"]);
  set("interface_version", flags["interface-version"]);
  set("controller_id", flags["controller-id"]);
  set("timeout_seconds", num(flags["timeout-seconds"]));
  set("concurrency", num(flags.concurrency));
  set("max_queue", num(flags["max-queue"]));
  set("async", flags.async);
  set("callback_url", flags["callback-url"]);
  if (flags.env?.length) {
    const env: Record<string, string> = { ...((file.env as Record<string, string>) ?? {}) };
    for (const pair of flags.env) {
      const at = pair.indexOf("=");
      if (at <= 0) throw new ConfigError(`--env expects NAME=VALUE, got '${pair}'`);
      env[pair.slice(0, at)] = pair.slice(at + 1);
    }
    merged.env = env;
  }
  if (flags["pass-env"]?.length) merged.pass_env = [...((file.pass_env as string[]) ?? []), ...flags["pass-env"]];

  const secretFile = flags["secret-file"] ?? (typeof file.secret_file === "string" ? file.secret_file : undefined);
  delete merged.secret_file;
  if (secretFile) {
    try {
      merged.secret = readFileSync(secretFile, "utf8").trim();
    } catch (err) {
      throw new ConfigError(`cannot read secret file ${secretFile}: ${(err as Error).message}`);
    }
  } else if (merged.secret === undefined && environ[SECRET_ENV]) {
    merged.secret = environ[SECRET_ENV];
  }

  const parsed = BridgeConfig.safeParse(merged);
  if (!parsed.success) {
    throw new ConfigError(
      "invalid configuration: " + parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; "),
    );
  }
  try {
    accessSync(parsed.data.provider_executable, constants.X_OK);
  } catch {
    throw new ConfigError(`provider_executable ${parsed.data.provider_executable} does not exist or is not executable`);
  }
  return parsed.data;
}
