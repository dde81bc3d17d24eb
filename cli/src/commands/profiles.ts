/**
 * `edgerunner login` and `edgerunner profile …`: the profile file (see config.ts). login checks the
 * token against the coordinator before it writes anything; the file is written mode 0600.
 */
import { makeClient, unwrap } from "../client.ts";
import { type Command, str } from "../command.ts";
import { configPath, DEFAULT_PROFILE, normalizeUrl, readConfigFile, resolveConfig, writeConfigFile } from "../config.ts";
import { UsageError } from "../errors.ts";
import { checkOneStdinSecret, readSecret, secretOptions } from "../secrets.ts";
import { renderRecord, renderTable } from "../table.ts";

export const profileCommands: Command[] = [
  {
    words: ["login"],
    summary: "Save a coordinator URL and token as a profile (checked first; the file is mode 0600)",
    options: {
      ...secretOptions("token", "the API token (ADMIN_TOKEN or a named token)"),
      "access-client-id": { type: "string", arg: "ID", description: "a Cloudflare Access service token's client id (API behind Access)" },
      ...secretOptions("access-client-secret", "that service token's client secret"),
    },
    example: "edgerunner login --url https://edgerunner.example.workers.dev --token-from-stdin < token.txt",
    run: async (ctx) => {
      if (!ctx.global.url) throw new UsageError("--url is required");
      checkOneStdinSecret(ctx.values, ["token", "access-client-secret"]);
      const url = normalizeUrl(ctx.global.url, "--url");
      const clientId = str(ctx.values, "access-client-id");
      const clientSecret = await readSecret(ctx, "access-client-secret", { required: clientId !== undefined });
      if (clientSecret !== undefined && clientId === undefined) throw new UsageError("--access-client-id is required with its secret");
      const access = clientId && clientSecret ? { clientId, clientSecret } : undefined;
      // Behind Access alone (no Edgerunner token), the service token is the credential.
      const token = await readSecret(ctx, "token", { required: access === undefined });
      // One authenticated read: a wrong URL or token fails here rather than on the next command.
      await unwrap(makeClient(url, token, ctx.io.fetch, access).GET("/api/v1/github/endpoints"));
      const path = configPath(ctx.io.env);
      const file = readConfigFile(path) ?? { profiles: {} };
      const name = ctx.global.profile ?? ctx.io.env.EDGERUNNER_PROFILE ?? file.current ?? DEFAULT_PROFILE;
      file.profiles[name] = {
        url,
        ...(token ? { token } : {}),
        ...(access ? { access_client_id: access.clientId, access_client_secret: access.clientSecret } : {}),
      };
      file.current = name;
      writeConfigFile(path, file);
      return { data: { profile: name, url, config: path }, text: `logged in to ${url} as profile "${name}" (${path})\n` };
    },
  },
  {
    words: ["profile", "list"],
    summary: "List the profiles in the profile file (without their tokens)",
    run: async (ctx) => {
      const path = configPath(ctx.io.env);
      const file = readConfigFile(path) ?? { profiles: {} };
      const data = Object.entries(file.profiles).map(([name, p]) => ({ name, url: p.url ?? null, current: name === file.current }));
      return {
        data,
        text: renderTable(
          [
            { header: "", value: (r: (typeof data)[0]) => (r.current ? "*" : "") },
            { header: "NAME", value: (r) => r.name },
            { header: "URL", value: (r) => r.url },
          ],
          data,
        ),
      };
    },
  },
  {
    words: ["profile", "use"],
    summary: "Make a profile the one used when --profile and EDGERUNNER_PROFILE are not given",
    args: ["<name>"],
    run: async (ctx) => {
      const path = configPath(ctx.io.env);
      const file = readConfigFile(path);
      const name = ctx.positionals[0]!;
      if (!file?.profiles[name]) throw new UsageError(`no profile "${name}" in ${path}`);
      file.current = name;
      writeConfigFile(path, file);
      return { data: { current: name }, text: `using profile "${name}"\n` };
    },
  },
  {
    words: ["profile", "show"],
    summary: "Show the URL the next command would use, and where the URL and token come from (never the token)",
    run: async (ctx) => {
      const path = configPath(ctx.io.env);
      const r = resolveConfig(ctx.global, ctx.io.env, readConfigFile(path), path);
      const data = {
        url: r.url,
        url_from: r.source.url,
        token_from: r.source.token,
        access_service_token_from: r.source.access,
        profile: r.profile,
        config: path,
      };
      return { data, text: renderRecord(data) };
    },
  },
];
