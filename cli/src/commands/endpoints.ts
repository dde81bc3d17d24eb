/** `edgerunner endpoint …`: forge endpoints (github.com, GitHub Enterprise Server, Gitea and Forgejo instances). */
import { readFileSync } from "node:fs";
import type { components } from "../api-types.ts";
import { unwrap } from "../client.ts";
import { type Command, type Context, defined, deleted, nonEmpty, requireStr, str } from "../command.ts";
import { UsageError } from "../errors.ts";
import { renderRecord, renderTable } from "../table.ts";

type Endpoint = components["schemas"]["GithubEndpoint"];
type Forge = Endpoint["forge"];
const forges: readonly Forge[] = ["github", "gitea", "forgejo"];

const table = (rows: Endpoint[]) =>
  renderTable<Endpoint>(
    [
      { header: "NAME", value: (e) => e.name },
      { header: "FORGE", value: (e) => e.forge },
      { header: "BASE URL", value: (e) => e.base_url },
      { header: "API BASE URL", value: (e) => e.api_base_url },
      { header: "CA BUNDLE", value: (e) => (e.ca_cert_bundle ? "yes" : "no") },
      { header: "DESCRIPTION", value: (e) => e.description },
    ],
    rows,
  );

const caBundle = (ctx: Context): string | undefined => {
  const file = str(ctx.values, "ca-cert-bundle-file");
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError(`--ca-cert-bundle-file: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
};
const fields = {
  description: { type: "string", arg: "TEXT", description: "what it is for" },
  "base-url": { type: "string", arg: "URL", description: "the web URL, e.g. https://ghes.example.com" },
  "api-base-url": { type: "string", arg: "URL", description: "the REST API URL, e.g. https://ghes.example.com/api/v3" },
  "upload-base-url": { type: "string", arg: "URL", description: "the uploads URL (defaults from the API URL)" },
  "ca-cert-bundle-file": { type: "string", arg: "PATH", description: "PEM certificates to trust for this endpoint" },
} as const;

export const endpointCommands: Command[] = [
  {
    words: ["endpoint", "list"],
    summary: "List GitHub endpoints",
    run: async (ctx) => {
      const data = await unwrap(ctx.api().GET("/api/v1/github/endpoints"));
      return { data, text: table(data) };
    },
  },
  {
    words: ["endpoint", "show"],
    summary: "Show a GitHub endpoint",
    args: ["<name>"],
    run: async (ctx) => {
      const data = await unwrap(ctx.api().GET("/api/v1/github/endpoints/{name}", { params: { path: { name: ctx.positionals[0]! } } }));
      return { data, text: renderRecord(data) };
    },
  },
  {
    words: ["endpoint", "create"],
    summary: "Add a GitHub Enterprise Server, Gitea or Forgejo endpoint",
    options: {
      name: { type: "string", arg: "NAME", description: "its name (required)" },
      forge: { type: "string", arg: "FORGE", description: "github (default), gitea or forgejo; fixed once created" },
      ...fields,
    },
    example:
      "edgerunner endpoint create --name ghes --base-url https://ghes.example.com --api-base-url https://ghes.example.com/api/v3\n  edgerunner endpoint create --name gitea --forge gitea --base-url https://gitea.example.com",
    run: async (ctx) => {
      const v = ctx.values;
      const forge = str(v, "forge");
      if (forge !== undefined && !forges.includes(forge as Forge)) {
        throw new UsageError(`--forge: one of ${forges.join(", ")}, not '${forge}'`);
      }
      const body = {
        name: requireStr(v, "name"),
        base_url: requireStr(v, "base-url"),
        // Gitea and Forgejo serve their API at <base URL>/api/v1, which the coordinator fills in.
        ...(forge === undefined || forge === "github" ? { api_base_url: requireStr(v, "api-base-url") } : {}),
        ...defined({
          forge: forge as Forge | undefined,
          api_base_url: str(v, "api-base-url"),
          description: str(v, "description"),
          upload_base_url: str(v, "upload-base-url"),
          ca_cert_bundle: caBundle(ctx),
        }),
      };
      const data = await unwrap(ctx.api().POST("/api/v1/github/endpoints", { body }));
      return { data, text: renderRecord(data) };
    },
  },
  {
    words: ["endpoint", "update"],
    summary: "Change a GitHub endpoint",
    args: ["<name>"],
    options: { ...fields, "remove-ca-cert-bundle": { type: "boolean", description: "trust only the public CAs again" } },
    run: async (ctx) => {
      const v = ctx.values;
      const body = nonEmpty(
        defined({
          description: str(v, "description"),
          base_url: str(v, "base-url"),
          api_base_url: str(v, "api-base-url"),
          upload_base_url: str(v, "upload-base-url"),
          ca_cert_bundle: v["remove-ca-cert-bundle"] === true ? null : caBundle(ctx),
        }),
        "the endpoint",
      );
      const data = await unwrap(
        ctx.api().PUT("/api/v1/github/endpoints/{name}", { params: { path: { name: ctx.positionals[0]! } }, body }),
      );
      return { data, text: renderRecord(data) };
    },
  },
  {
    words: ["endpoint", "delete"],
    summary: "Delete a GitHub endpoint no credentials use",
    args: ["<name>"],
    run: async (ctx) => {
      const name = ctx.positionals[0]!;
      await unwrap(ctx.api().DELETE("/api/v1/github/endpoints/{name}", { params: { path: { name } } }));
      return deleted(`endpoint ${name}`);
    },
  },
];
