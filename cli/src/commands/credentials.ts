/**
 * `edgerunner credential …`: PATs and GitHub Apps. The token, private key and App webhook
 * secret come from a file or stdin, never from argv.
 */

import type { components } from "../api-types.ts";
import { unwrap } from "../client.ts";
import { bool, type Command, type Context, defined, deleted, int, missing, nonEmpty, requireStr, str } from "../command.ts";
import { UsageError } from "../errors.ts";
import { credentialsId } from "../resolve.ts";
import { checkOneStdinSecret, readSecret, secretOptions } from "../secrets.ts";
import { renderRecord, renderTable } from "../table.ts";

type Credentials = components["schemas"]["GithubCredentials"];
type Create = components["schemas"]["CreateGithubCredentials"];
type Update = components["schemas"]["UpdateGithubCredentials"];

const table = (rows: Credentials[]) =>
  renderTable<Credentials>(
    [
      { header: "ID", value: (c) => c.id },
      { header: "NAME", value: (c) => c.name },
      { header: "ENDPOINT", value: (c) => c.endpoint },
      { header: "TYPE", value: (c) => c.auth_type },
      { header: "APP ID", value: (c) => c.app_id },
      { header: "INSTALLATION", value: (c) => c.installation_id },
      { header: "HEALTH", value: (c) => c.health.status },
      { header: "DESCRIPTION", value: (c) => c.description },
    ],
    rows,
  );

const SECRETS = ["token", "private-key", "webhook-secret"];
const secretOpts = {
  ...secretOptions("token", "the personal access token (--auth-type pat)"),
  ...secretOptions("private-key", "the App's private key, PEM (--auth-type app)"),
  ...secretOptions("webhook-secret", "the App's own webhook secret (optional, see docs/github-app-webhooks.md)"),
};
const appOpts = {
  "app-id": { type: "string", arg: "N", description: "the GitHub App's id" },
  "installation-id": { type: "string", arg: "N", description: "the App installation's id" },
} as const;

async function appFields(ctx: Context, required: boolean) {
  return defined({
    app_id: required ? (int(ctx.values, "app-id") ?? missing("app-id")) : int(ctx.values, "app-id"),
    installation_id: required ? (int(ctx.values, "installation-id") ?? missing("installation-id")) : int(ctx.values, "installation-id"),
    private_key: await readSecret(ctx, "private-key", { required }),
    webhook_secret: await readSecret(ctx, "webhook-secret", { required: false }),
  });
}

export const credentialCommands: Command[] = [
  {
    words: ["credential", "list"],
    summary: "List GitHub credentials",
    run: async (ctx) => {
      const data = await unwrap(ctx.api().GET("/api/v1/github/credentials"));
      return { data, text: table(data) };
    },
  },
  {
    words: ["credential", "show"],
    summary: "Show GitHub credentials (with their health, rate limit and GitHub budget)",
    args: ["<name|id>"],
    run: async (ctx) => {
      const id = await credentialsId(ctx.api(), ctx.positionals[0]!);
      const data = await unwrap(ctx.api().GET("/api/v1/github/credentials/{id}", { params: { path: { id } } }));
      return { data, text: renderRecord(data) };
    },
  },
  {
    words: ["credential", "create"],
    summary: "Add a PAT or GitHub App credential",
    options: {
      name: { type: "string", arg: "NAME", description: "its name (required)" },
      endpoint: { type: "string", arg: "NAME", description: "the GitHub endpoint (default github.com)" },
      description: { type: "string", arg: "TEXT", description: "what it is for" },
      "auth-type": { type: "string", arg: "pat|app", description: "a personal access token or a GitHub App (required)" },
      ...appOpts,
      ...secretOpts,
    },
    example: "edgerunner credential create --name ci-pat --auth-type pat --token-from-stdin < token.txt",
    run: async (ctx) => {
      const v = ctx.values;
      checkOneStdinSecret(v, SECRETS);
      const common = { name: requireStr(v, "name"), ...defined({ endpoint: str(v, "endpoint"), description: str(v, "description") }) };
      const type = requireStr(v, "auth-type");
      let body: Create;
      if (type === "pat") {
        body = { ...common, auth_type: "pat", pat: { oauth2_token: (await readSecret(ctx, "token", { required: true }))! } };
      } else if (type === "app") {
        body = { ...common, auth_type: "app", app: (await appFields(ctx, true)) as Extract<Create, { auth_type: "app" }>["app"] };
      } else {
        throw new UsageError(`--auth-type: pat or app, not "${type}"`);
      }
      const data = await unwrap(ctx.api().POST("/api/v1/github/credentials", { body }));
      return { data, text: renderRecord(data) };
    },
  },
  {
    words: ["credential", "update"],
    summary: "Rename, describe, or give new secrets to GitHub credentials",
    args: ["<name|id>"],
    options: {
      name: { type: "string", arg: "NAME", description: "a new name" },
      description: { type: "string", arg: "TEXT", description: "what it is for" },
      ...appOpts,
      ...secretOpts,
      "remove-webhook-secret": { type: "boolean", description: "forget the App's own webhook secret" },
    },
    run: async (ctx) => {
      const v = ctx.values;
      checkOneStdinSecret(v, SECRETS);
      const token = await readSecret(ctx, "token", { required: false });
      const app: Update["app"] = await appFields(ctx, false);
      if (bool(v, "remove-webhook-secret")) app.webhook_secret = null;
      const body: Update = nonEmpty(
        defined({
          name: str(v, "name"),
          description: str(v, "description"),
          pat: token === undefined ? undefined : { oauth2_token: token },
          app: Object.keys(app).length ? app : undefined,
        }),
        "the credentials",
      );
      const id = await credentialsId(ctx.api(), ctx.positionals[0]!);
      const data = await unwrap(ctx.api().PUT("/api/v1/github/credentials/{id}", { params: { path: { id } }, body }));
      return { data, text: renderRecord(data) };
    },
  },
  {
    words: ["credential", "delete"],
    summary: "Delete GitHub credentials no repository, organization or enterprise uses",
    args: ["<name|id>"],
    run: async (ctx) => {
      const id = await credentialsId(ctx.api(), ctx.positionals[0]!);
      await unwrap(ctx.api().DELETE("/api/v1/github/credentials/{id}", { params: { path: { id } } }));
      return deleted(`credentials ${ctx.positionals[0]}`);
    },
  },
];
