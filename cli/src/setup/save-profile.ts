/**
 * After a setup that created the admin token: save it as a CLI profile for the new coordinator,
 * as `edgerunner login` would (the file is mode 0600), so the CLI works at once and a later
 * `setup --shim` can register the shim. A profile of that name for another coordinator
 * is left alone: its token would be lost.
 */
import { configPath, DEFAULT_PROFILE, normalizeUrl, readConfigFile, writeConfigFile } from "../config.ts";

export function saveSetupProfile(
  env: NodeJS.ProcessEnv,
  requested: string | undefined,
  url: string,
  token: string,
): { line: string; profile?: string } {
  const name = requested ?? env.EDGERUNNER_PROFILE ?? DEFAULT_PROFILE;
  const path = configPath(env);
  const file = readConfigFile(path) ?? { profiles: {} };
  const existing = file.profiles[name]?.url;
  if (existing && normalizeUrl(existing, path) !== url) {
    return {
      line:
        `! profile "${name}" is for ${existing}: left as it is. To save this coordinator: ` +
        `edgerunner login --url ${url} --profile NAME --token-from-stdin (with the token below)`,
    };
  }
  file.profiles[name] = { ...file.profiles[name], url, token };
  file.current ??= name;
  writeConfigFile(path, file);
  const use = file.current === name ? "" : ` (not the current profile: \`edgerunner profile use ${name}\`)`;
  return { line: `+ saved the admin token in CLI profile "${name}" (${path})${use}`, profile: name };
}
