/**
 * The deploy config: a git-ignored `wrangler.deploy.toml` next to a committed `wrangler.toml`,
 * made from it with the few values that belong to one Cloudflare account (the D1 database's name
 * and id, vars such as PUBLIC_URL or AWS_REGION). The committed file keeps its placeholders, so
 * `npm run dev` and the tests never see production values, and nobody edits it by hand.
 *
 * Being regenerated from the committed file on every `setup` and `npm run deploy`, it never drifts
 * from it: the settings ride on its first line as JSON, the rest is the committed file with those
 * values put in. Pure: text in, text out.
 */

export interface DeploySettings {
  /** The `[[d1_databases]]` table's database_name and database_id (the coordinator only). */
  database?: { name: string; id: string };
  /** `[vars]` values to set (PUBLIC_URL, AWS_REGION). */
  vars: Record<string, string>;
}

export const DEPLOY_CONFIG_NAME = "wrangler.deploy.toml";

const MARKER = "# edgerunner-deploy-settings: ";

/** The settings a generated file was made with (undefined: not a file setup wrote). */
export function readDeploySettings(generated: string): DeploySettings | undefined {
  const first = generated.split("\n", 1)[0] ?? "";
  if (!first.startsWith(MARKER)) return undefined;
  try {
    const parsed = JSON.parse(first.slice(MARKER.length)) as DeploySettings;
    return { ...(parsed.database ? { database: parsed.database } : {}), vars: { ...parsed.vars } };
  } catch {
    return undefined;
  }
}

/** A TOML basic string: JSON's escaping is a subset of what TOML accepts for one. */
const tomlString = (value: string) => JSON.stringify(value);

const tableHeader = /^\s*(\[\[?)\s*([A-Za-z0-9_.-]+)\s*\]\]?\s*(#.*)?$/;

/**
 * Sets `key = "value"` in the first table called `table` (`[vars]`, `[[d1_databases]]`): the
 * key's line replaced, or a new line under the header when the table does not set it. A table
 * that is not there is an error: the committed file changed shape, and guessing would deploy
 * something else than asked.
 */
function setKey(lines: string[], table: string, key: string, value: string, source: string): void {
  const start = lines.findIndex((l) => tableHeader.exec(l)?.[2] === table);
  if (start < 0) throw new Error(`${source} has no [${table}] table to put ${key} in`);
  let end = lines.findIndex((l, i) => i > start && tableHeader.test(l));
  if (end < 0) end = lines.length;
  const keyLine = new RegExp(`^\\s*${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*=`);
  const at = lines.findIndex((l, i) => i > start && i < end && keyLine.test(l));
  const line = `${key} = ${tomlString(value)}`;
  if (at >= 0) lines[at] = line;
  else lines.splice(start + 1, 0, line);
}

/** The deploy config for `base` (the committed file's text) with `settings` put in. */
export function renderDeployConfig(base: string, settings: DeploySettings, source: string): string {
  const lines = base.replace(/\r\n/g, "\n").split("\n");
  if (settings.database) {
    setKey(lines, "d1_databases", "database_name", settings.database.name, source);
    setKey(lines, "d1_databases", "database_id", settings.database.id, source);
  }
  for (const [key, value] of Object.entries(settings.vars)) setKey(lines, "vars", key, value, source);
  const header = [
    MARKER + JSON.stringify(settings),
    `# Generated from ${source} by \`edgerunner setup\`; \`npm run deploy\` regenerates it before each deploy.`,
    "# Do not edit: change the committed file, or run setup again with other options (docs/deploy.md).",
    "",
  ];
  return header.join("\n") + lines.join("\n");
}

/** A var as the committed file sets it (for the defaults setup starts from, such as AWS_REGION). */
export function committedVar(base: string, key: string): string | undefined {
  const lines = base.replace(/\r\n/g, "\n").split("\n");
  const start = lines.findIndex((l) => tableHeader.exec(l)?.[2] === "vars");
  if (start < 0) return undefined;
  for (let i = start + 1; i < lines.length && !tableHeader.test(lines[i]!); i++) {
    const m = new RegExp(`^\\s*${key}\\s*=\\s*"((?:[^"\\\\]|\\\\.)*)"`).exec(lines[i]!);
    if (m) return JSON.parse(`"${m[1]}"`) as string;
  }
  return undefined;
}
