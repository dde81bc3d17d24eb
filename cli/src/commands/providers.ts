/** `edgerunner provider …`: provider shims (the HTTP services that create and delete runner machines). */

import type { components } from "../api-types.ts";
import { unwrap } from "../client.ts";
import { type Command, defined, deleted, int, nonEmpty, requireStr, str } from "../command.ts";
import { readSecret, secretOptions } from "../secrets.ts";
import { renderRecord, renderTable } from "../table.ts";

type Provider = components["schemas"]["Provider"];

const table = (rows: Provider[]) =>
  renderTable<Provider>(
    [
      { header: "NAME", value: (p) => p.name },
      { header: "URL", value: (p) => p.url },
      { header: "TIMEOUT", value: (p) => `${p.timeout_seconds}s` },
      { header: "DESCRIPTION", value: (p) => p.description },
    ],
    rows,
  );

const fields = {
  // Not --url: that is the coordinator's (a global option).
  "shim-url": { type: "string", arg: "URL", description: "the shim's base URL" },
  description: { type: "string", arg: "TEXT", description: "what it is for" },
  "timeout-seconds": { type: "string", arg: "N", description: "how long a call to the shim may take" },
} as const;

export const providerCommands: Command[] = [
  {
    words: ["provider", "list"],
    summary: "List provider shims",
    run: async (ctx) => {
      const data = await unwrap(ctx.api().GET("/api/v1/providers"));
      return { data, text: table(data) };
    },
  },
  {
    words: ["provider", "show"],
    summary: "Show a provider shim",
    args: ["<name>"],
    run: async (ctx) => {
      const data = await unwrap(ctx.api().GET("/api/v1/providers/{name}", { params: { path: { name: ctx.positionals[0]! } } }));
      return { data, text: renderRecord(data) };
    },
  },
  {
    words: ["provider", "create"],
    summary: "Register a provider shim",
    options: {
      name: { type: "string", arg: "NAME", description: "its name (required)" },
      ...fields,
      ...secretOptions("secret", "the secret requests to the shim are signed with (required)"),
    },
    example: "edgerunner provider create --name aws --shim-url https://shim.example.com --secret-from-file ./shim-secret",
    run: async (ctx) => {
      const v = ctx.values;
      const body = {
        name: requireStr(v, "name"),
        url: requireStr(v, "shim-url"),
        secret: (await readSecret(ctx, "secret", { required: true }))!,
        ...defined({ description: str(v, "description"), timeout_seconds: int(v, "timeout-seconds") }),
      };
      const data = await unwrap(ctx.api().POST("/api/v1/providers", { body }));
      return { data, text: renderRecord(data) };
    },
  },
  {
    words: ["provider", "update"],
    summary: "Change a provider shim's URL, secret, timeout or description",
    args: ["<name>"],
    options: {
      ...fields,
      "shim-url": {
        ...fields["shim-url"],
        description: "the shim's new base URL; while scale sets use the provider, only with a new secret in the same command",
      },
      ...secretOptions("secret", "the shim's new signing secret"),
    },
    example: "edgerunner provider update aws --shim-url https://new-shim.example.com --secret-from-file ./new-shim-secret",
    run: async (ctx) => {
      const v = ctx.values;
      const body = nonEmpty(
        defined({
          url: str(v, "shim-url"),
          description: str(v, "description"),
          timeout_seconds: int(v, "timeout-seconds"),
          secret: await readSecret(ctx, "secret", { required: false }),
        }),
        "the provider",
      );
      const data = await unwrap(ctx.api().PUT("/api/v1/providers/{name}", { params: { path: { name: ctx.positionals[0]! } }, body }));
      return { data, text: renderRecord(data) };
    },
  },
  {
    words: ["provider", "delete"],
    summary: "Delete a provider no scale set uses",
    args: ["<name>"],
    run: async (ctx) => {
      const name = ctx.positionals[0]!;
      await unwrap(ctx.api().DELETE("/api/v1/providers/{name}", { params: { path: { name } } }));
      return deleted(`provider ${name}`);
    },
  },
];
