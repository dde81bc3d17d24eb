/**
 * `edgerunner app …`: the GitHub Apps made on the dashboard's first-run page (/ui/setup; GitHub's
 * manifest flow is a browser round trip, so they are created there, not here).
 */

import type { components } from "../api-types.ts";
import { unwrap } from "../client.ts";
import { type Command, deleted } from "../command.ts";
import { renderRecord, renderTable } from "../table.ts";

type App = components["schemas"]["GithubApp"];

const table = (rows: App[]) =>
  renderTable<App>(
    [
      { header: "ID", value: (a) => a.id },
      { header: "APP", value: (a) => `${a.slug} (${a.app_id})` },
      { header: "OWNER", value: (a) => a.owner },
      { header: "ENDPOINT", value: (a) => a.endpoint },
      {
        header: "INSTALLATIONS",
        value: (a) =>
          a.installations.map((i) => `${i.account}:${i.status}:${i.repository_selection === "all" ? "all" : i.repositories.length}`),
      },
      { header: "INSTALL AT", value: (a) => a.install_url },
    ],
    rows,
  );

export const appCommands: Command[] = [
  {
    words: ["app", "list"],
    summary: "List the GitHub Apps made on the first-run page, with their installations",
    run: async (ctx) => {
      const data = await unwrap(ctx.api().GET("/api/v1/github/apps"));
      return { data, text: data.length ? table(data) : "no GitHub App made here yet: open <coordinator>/ui/setup to create one\n" };
    },
  },
  {
    words: ["app", "show"],
    summary: "Show a GitHub App and its installations",
    args: ["<id>"],
    run: async (ctx) => {
      const data = await unwrap(ctx.api().GET("/api/v1/github/apps/{id}", { params: { path: { id: ctx.positionals[0]! } } }));
      return { data, text: renderRecord(data) };
    },
  },
  {
    words: ["app", "sync"],
    summary: "Read the App's installations from GitHub again (makes credentials for new ones)",
    args: ["<id>"],
    run: async (ctx) => {
      const data = await unwrap(ctx.api().POST("/api/v1/github/apps/{id}/sync", { params: { path: { id: ctx.positionals[0]! } } }));
      return { data, text: renderRecord(data) };
    },
  },
  {
    words: ["app", "delete"],
    summary: "Forget a GitHub App made here (delete it on GitHub too; its credentials stay until deleted)",
    args: ["<id>"],
    run: async (ctx) => {
      await unwrap(ctx.api().DELETE("/api/v1/github/apps/{id}", { params: { path: { id: ctx.positionals[0]! } } }));
      return deleted(`GitHub App ${ctx.positionals[0]}`);
    },
  },
];
