/**
 * `edgerunner repo|org|enterprise …`: the GitHub entities scale sets belong to, and (repositories
 * and organizations) the coordinator's webhook on them. A repository is named `owner/name`, the
 * others by name; ids work everywhere. The webhook secret comes from a file or stdin. The
 * credential pool is a list of credential names (`--pool-credentials a,b`; `''` empties it).
 */

import type { components } from "../api-types.ts";
import { unwrap } from "../client.ts";
import { bool, type Command, type Context, defined, deleted, list, nonEmpty, type OptionSpec, requireStr, str } from "../command.ts";
import { ENTITY_PATH, type EntityKind, entityId } from "../resolve.ts";
import { readSecret, secretOptions } from "../secrets.ts";
import { renderRecord, renderTable } from "../table.ts";

type Entity = components["schemas"]["Repository"] | components["schemas"]["Organization"] | components["schemas"]["Enterprise"];
type Webhook = components["schemas"]["Webhook"];

const NOUN = { repository: "repo", organization: "org", enterprise: "enterprise" } as const;

const label = (e: Entity) => ("owner" in e ? `${e.owner}/${e.name}` : e.name);
const poolNames = (e: Entity) => e.pool_credentials.map((c) => c.name);
/** One entity for people: its pool by name (the ids are in --json). */
const record = (e: Entity) => renderRecord({ ...e, pool_credentials: poolNames(e) });

const poolOption: Record<string, OptionSpec> = {
  "pool-credentials": {
    type: "string",
    arg: "A,B",
    description: "other credentials of its endpoint that also mint its runners' JIT configs (its credential pool); '' for none",
  },
};
const table = (rows: Entity[]) =>
  renderTable<Entity>(
    [
      { header: "ID", value: (e) => e.id },
      { header: "NAME", value: label },
      { header: "ENDPOINT", value: (e) => e.endpoint },
      { header: "FORGE", value: (e) => e.forge },
      { header: "CREDENTIALS", value: (e) => e.credentials_name },
      { header: "POOL", value: (e) => poolNames(e) },
      { header: "PARENT SCALE SETS", value: (e) => ("use_parent_scale_sets" in e ? (e.use_parent_scale_sets ? "yes" : "no") : "") },
      { header: "WEBHOOK URL", value: (e) => e.webhook_url ?? "none (polled)" },
    ],
    rows,
  );

// The routes are the same per kind; openapi-fetch types each literal path, so the kind's path
// goes through one cast here (the bodies and answers are the shared entity shapes).
type AnyPath = "/api/v1/repositories";
type AnyIdPath = "/api/v1/repositories/{id}";
type AnyHookPath = "/api/v1/repositories/{id}/webhook";
const base = (kind: EntityKind) => `/api/v1/${ENTITY_PATH[kind]}` as AnyPath;
const byId = (kind: EntityKind) => `/api/v1/${ENTITY_PATH[kind]}/{id}` as AnyIdPath;
const hook = (kind: EntityKind) => `/api/v1/${ENTITY_PATH[kind]}/{id}/webhook` as AnyHookPath;

const parentOpts: Record<string, OptionSpec> = {
  "use-parent-scale-sets": {
    type: "boolean",
    description: "jobs may also run on the parents' scale sets (--no-use-parent-scale-sets: not)",
  },
  enterprise: { type: "string", arg: "SLUG", description: "the registered enterprise it belongs to" },
};

function createBody(ctx: Context, kind: EntityKind, webhookSecret: string | undefined) {
  const v = ctx.values;
  const common = {
    credentials_name: requireStr(v, "credentials"),
    ...defined({ webhook_secret: webhookSecret, pool_credentials: list(v, "pool-credentials") }),
  };
  if (kind === "enterprise") return { name: requireStr(v, "name"), ...common };
  const parents = defined({ use_parent_scale_sets: bool(v, "use-parent-scale-sets"), enterprise: str(v, "enterprise") });
  if (kind === "organization") return { name: requireStr(v, "name"), ...common, ...parents };
  return { owner: requireStr(v, "owner"), name: requireStr(v, "name"), ...common, ...parents };
}

function entityCommands(kind: EntityKind): Command[] {
  const noun = NOUN[kind];
  const a = kind === "repository" ? "a" : "an";
  const ref = kind === "repository" ? "<owner/name|id>" : "<name|id>";
  const id = (ctx: Context) => entityId(ctx.api(), kind, ctx.positionals[0]!);
  const commands: Command[] = [
    {
      words: [noun, "list"],
      summary: `List ${ENTITY_PATH[kind]}`,
      run: async (ctx) => {
        const data = (await unwrap(ctx.api().GET(base(kind)))) as Entity[];
        return { data, text: table(data) };
      },
    },
    {
      words: [noun, "show"],
      summary: `Show ${a} ${kind}`,
      args: [ref],
      run: async (ctx) => {
        const data = await unwrap(ctx.api().GET(byId(kind), { params: { path: { id: await id(ctx) } } }));
        return { data, text: record(data) };
      },
    },
    {
      words: [noun, "create"],
      summary: `Add ${a} ${kind}`,
      options: {
        ...(kind === "repository" ? { owner: { type: "string", arg: "OWNER", description: "the repository's owner (required)" } } : {}),
        name: { type: "string", arg: "NAME", description: `the ${kind}'s name (required)` },
        credentials: { type: "string", arg: "NAME", description: "the GitHub credentials to act with (required)" },
        ...poolOption,
        ...secretOptions(
          "webhook-secret",
          "the secret the forge signs its webhooks with (required on GitHub and Gitea; Forgejo sends none, its scale sets poll)",
        ),
        ...(kind === "enterprise" ? {} : parentOpts),
      },
      example:
        kind === "repository"
          ? "openssl rand -hex 20 | edgerunner repo create --owner octo --name app --credentials ci-pat --webhook-secret-from-stdin"
          : `edgerunner ${noun} create --name octo --credentials ci-pat --webhook-secret-from-file ./hook-secret`,
      run: async (ctx) => {
        // The coordinator says when the endpoint's forge needs it (GitHub, Gitea) and why.
        const secret = await readSecret(ctx, "webhook-secret", { required: false });
        const body = createBody(ctx, kind, secret) as components["schemas"]["CreateRepository"];
        const data = await unwrap(ctx.api().POST(base(kind), { body }));
        return { data, text: record(data) };
      },
    },
    {
      words: [noun, "update"],
      summary: `Change ${a} ${kind}'s credentials, credential pool or webhook secret${kind === "enterprise" ? "" : " or parent links"}`,
      args: [ref],
      options: {
        credentials: { type: "string", arg: "NAME", description: "other GitHub credentials (they leave the pool if they are in it)" },
        ...poolOption,
        ...secretOptions("webhook-secret", "a new webhook secret"),
        ...(kind === "enterprise"
          ? {}
          : { ...parentOpts, "remove-enterprise": { type: "boolean", description: "belong to no enterprise" } }),
      },
      run: async (ctx) => {
        const v = ctx.values;
        const body = nonEmpty(
          defined({
            credentials_name: str(v, "credentials"),
            pool_credentials: list(v, "pool-credentials"),
            webhook_secret: await readSecret(ctx, "webhook-secret", { required: false }),
            use_parent_scale_sets: bool(v, "use-parent-scale-sets"),
            enterprise: bool(v, "remove-enterprise") ? null : str(v, "enterprise"),
          }),
          `the ${kind}`,
        );
        const data = await unwrap(ctx.api().PUT(byId(kind), { params: { path: { id: await id(ctx) } }, body }));
        return { data, text: record(data) };
      },
    },
    {
      words: [noun, "delete"],
      summary: `Delete ${a} ${kind} that has no scale sets`,
      args: [ref],
      run: async (ctx) => {
        await unwrap(ctx.api().DELETE(byId(kind), { params: { path: { id: await id(ctx) } } }));
        return deleted(`${kind} ${ctx.positionals[0]}`);
      },
    },
  ];
  // An enterprise's webhook exists only where the enterprise is a Gitea instance (a system hook); GitHub answers 400.
  const hookText = (h: Webhook) => renderRecord(h);
  return [
    ...commands,
    {
      words: [noun, "webhook", "install"],
      summary: `Install the coordinator's workflow_job webhook on the ${kind}`,
      args: [ref],
      options: { "insecure-ssl": { type: "boolean", description: "let GitHub skip TLS verification of the coordinator (tests only)" } },
      run: async (ctx) => {
        const body = defined({ insecure_ssl: bool(ctx.values, "insecure-ssl") });
        const data = await unwrap(ctx.api().POST(hook(kind), { params: { path: { id: await id(ctx) } }, body }));
        return { data, text: hookText(data) };
      },
    },
    {
      words: [noun, "webhook", "show"],
      summary: `Show the coordinator's webhook on the ${kind}`,
      args: [ref],
      run: async (ctx) => {
        const data = await unwrap(ctx.api().GET(hook(kind), { params: { path: { id: await id(ctx) } } }));
        return { data, text: hookText(data) };
      },
    },
    {
      words: [noun, "webhook", "remove"],
      summary: `Remove the coordinator's webhook from the ${kind}`,
      args: [ref],
      run: async (ctx) => {
        await unwrap(ctx.api().DELETE(hook(kind), { params: { path: { id: await id(ctx) } } }));
        return { text: `removed the webhook from ${kind} ${ctx.positionals[0]}\n` };
      },
    },
  ];
}

export const entityCommandList: Command[] = [
  ...entityCommands("repository"),
  ...entityCommands("organization"),
  ...entityCommands("enterprise"),
];
