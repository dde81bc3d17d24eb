/**
 * Where the CLI finds the coordinator and its token. Precedence, highest first: flags (--url),
 * the environment (EDGERUNNER_URL, EDGERUNNER_TOKEN), the profile file
 * (~/.config/edgerunner/config.json, or $EDGERUNNER_CONFIG; named profiles, chosen with
 * --profile, EDGERUNNER_PROFILE or the file's "current"). The token has no flag: argv is visible
 * to other users of the machine (ps), so it comes from the environment or the 0600 profile file.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { UsageError } from "./errors.ts";

export interface Profile {
  url?: string;
  token?: string;
  /** A Cloudflare Access service token, when the admin API sits behind Access (docs/operations.md). */
  access_client_id?: string;
  access_client_secret?: string;
}

/** Sent as CF-Access-Client-Id / CF-Access-Client-Secret, for Cloudflare's edge to let the request through. */
export interface AccessServiceToken {
  clientId: string;
  clientSecret: string;
}

export interface ConfigFile {
  current?: string;
  profiles: Record<string, Profile>;
}

export interface Resolved {
  url: string;
  /** Absent only with an Access service token (the coordinator then acts with ACCESS_SCOPE). */
  token: string | undefined;
  access: AccessServiceToken | undefined;
  /** Where each value came from, for `edgerunner profile show` (never the values of secrets). */
  source: { url: string; token: string; access: string };
  profile: string;
}

export const DEFAULT_PROFILE = "default";

export function configPath(env: NodeJS.ProcessEnv): string {
  if (env.EDGERUNNER_CONFIG) return env.EDGERUNNER_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "edgerunner", "config.json");
}

export function parseConfigFile(text: string, path: string): ConfigFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${path} is not valid JSON: ${(e as Error).message}`);
  }
  const profiles = (data as ConfigFile | null)?.profiles;
  if (!data || typeof data !== "object" || !profiles || typeof profiles !== "object" || Array.isArray(profiles)) {
    throw new UsageError(`${path} has no "profiles" object`);
  }
  return data as ConfigFile;
}

export function readConfigFile(path: string): ConfigFile | undefined {
  if (!existsSync(path)) return undefined;
  return parseConfigFile(readFileSync(path, "utf8"), path);
}

/** Writes the file readable by its owner only (it holds tokens): via a 0600 temporary file, then rename. */
export function writeConfigFile(path: string, config: ConfigFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(config, null, 2) + "\n", { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** The URL with its trailing slashes and a pasted `/api/v1` suffix removed; only http(s). */
export function normalizeUrl(raw: string, from: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${from}: not a URL: ${raw}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`${from}: use an http(s) URL, not ${url.protocol}`);
  return url.href.replace(/\/+$/, "").replace(/\/api\/v1$/, "");
}

/** Pure: the URL and token to use, given the flags, the environment and the profile file (if any). */
export function resolveConfig(
  flags: { url?: string; profile?: string },
  env: NodeJS.ProcessEnv,
  file: ConfigFile | undefined,
  path: string,
): Resolved {
  const profileName = flags.profile ?? env.EDGERUNNER_PROFILE ?? file?.current ?? DEFAULT_PROFILE;
  const explicitProfile = flags.profile !== undefined || env.EDGERUNNER_PROFILE !== undefined;
  const profile = file?.profiles[profileName];
  if (explicitProfile && !profile) {
    const known = Object.keys(file?.profiles ?? {});
    throw new UsageError(
      `no profile "${profileName}" in ${path}`,
      known.length ? `profiles: ${known.join(", ")}` : "create it with `edgerunner login`",
    );
  }
  const fromProfile = `profile "${profileName}" (${path})`;
  const pick = (flag: string | undefined, flagName: string, envName: string, fromFile: string | undefined) =>
    flag
      ? { value: flag, source: flagName }
      : env[envName]
        ? { value: env[envName]!, source: envName }
        : fromFile
          ? { value: fromFile, source: fromProfile }
          : undefined;

  const url = pick(flags.url, "--url", "EDGERUNNER_URL", profile?.url);
  const token = pick(undefined, "", "EDGERUNNER_TOKEN", profile?.token);
  const accessId = pick(undefined, "", "EDGERUNNER_ACCESS_CLIENT_ID", profile?.access_client_id);
  const accessSecret = pick(undefined, "", "EDGERUNNER_ACCESS_CLIENT_SECRET", profile?.access_client_secret);
  const hint = "set EDGERUNNER_URL and EDGERUNNER_TOKEN, or run `edgerunner login --url URL --token-from-stdin`";
  if (!url) throw new UsageError("no coordinator URL configured", hint);
  if (!accessId !== !accessSecret) {
    throw new UsageError(
      "an Access service token needs both its client id and its secret",
      "set EDGERUNNER_ACCESS_CLIENT_ID and EDGERUNNER_ACCESS_CLIENT_SECRET",
    );
  }
  const access = accessId && accessSecret ? { clientId: accessId.value, clientSecret: accessSecret.value } : undefined;
  if (!token && !access) throw new UsageError("no API token configured", hint);
  return {
    url: normalizeUrl(url.value, url.source),
    token: token?.value,
    access,
    source: { url: url.source, token: token?.source ?? "none", access: accessId ? accessId.source : "none" },
    profile: profileName,
  };
}
