/**
 * `edgerunner token …`: named API tokens with a scope (read or admin). The token's value is in
 * the create answer only: printed once, never stored by the CLI.
 */

import type { components } from "../api-types.ts";
import { unwrap } from "../client.ts";
import { type Command, requireStr, str } from "../command.ts";
import { UsageError } from "../errors.ts";
import { tokenId } from "../resolve.ts";
import { renderRecord, renderTable } from "../table.ts";

type Token = components["schemas"]["ApiToken"];

const table = (rows: Token[]) =>
  renderTable<Token>(
    [
      { header: "ID", value: (t) => t.id },
      { header: "NAME", value: (t) => t.name },
      { header: "SCOPE", value: (t) => t.scope },
      { header: "CREATED BY", value: (t) => t.created_by },
      { header: "EXPIRES", value: (t) => t.expires_at },
      { header: "LAST USED", value: (t) => t.last_used_at },
      { header: "REVOKED", value: (t) => t.revoked_at },
    ],
    rows,
  );

export const tokenCommands: Command[] = [
  {
    words: ["token", "list"],
    summary: "List API tokens (never their value), revoked ones included",
    run: async (ctx) => {
      const data = await unwrap(ctx.api().GET("/api/v1/tokens"));
      return { data, text: table(data) };
    },
  },
  {
    words: ["token", "create"],
    summary: "Create an API token: its value is printed once, keep it",
    options: {
      name: { type: "string", arg: "NAME", description: "its name (required, unique among live tokens)" },
      scope: { type: "string", arg: "read|admin", description: "read: GET routes and /metrics; admin: everything (required)" },
      "expires-at": { type: "string", arg: "TIME", description: "when it stops working (ISO 8601); never when absent" },
    },
    example: "edgerunner token create --name prometheus --scope read",
    run: async (ctx) => {
      const scope = requireStr(ctx.values, "scope");
      if (scope !== "read" && scope !== "admin") throw new UsageError(`--scope: read or admin, not "${scope}"`);
      const expires = str(ctx.values, "expires-at");
      const body = { name: requireStr(ctx.values, "name"), scope, ...(expires === undefined ? {} : { expires_at: expires }) } as const;
      const data = await unwrap(ctx.api().POST("/api/v1/tokens", { body }));
      const { token, ...rest } = data;
      return { data, text: `${renderRecord(rest)}\ntoken: ${token}\n(shown once: store it now)\n` };
    },
  },
  {
    words: ["token", "revoke"],
    summary: "Revoke an API token (by id, or by the name of a live token)",
    args: ["<id|name>"],
    run: async (ctx) => {
      const ref = ctx.positionals[0]!;
      const api = ctx.api();
      await unwrap(api.DELETE("/api/v1/tokens/{id}", { params: { path: { id: await tokenId(api, ref) } } }));
      return { text: `revoked API token ${ref}\n` };
    },
  },
];
