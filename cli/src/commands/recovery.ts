/**
 * `edgerunner recovery show`: how each entity's lost webhook deliveries are found (GitHub makes one
 * attempt per delivery and never retries), and `edgerunner recovery run`: a pass now, after an
 * outage, rather than wait for the next.
 */

import type { components } from "../api-types.ts";
import { unwrap } from "../client.ts";
import type { Command } from "../command.ts";
import { renderTable } from "../table.ts";

type Entity = components["schemas"]["DeliveryRecovery"]["entities"][number];

const WHERE: Record<string, string> = { repository: "repo hook", organization: "org hook", app: "App webhook", backstop: "backstop" };

export const recoveryTable = (rows: Entity[]) =>
  renderTable<Entity>(
    [
      { header: "ENTITY", value: (e) => e.entity },
      {
        header: "FOUND THROUGH",
        value: (e) => e.means.map((m) => `${WHERE[m.kind] ?? m.kind} (${m.status ?? "not looked at yet"})`).join(", "),
      },
      { header: "FAILED 24H", value: (e) => e.last_24h.failed },
      { header: "RECOVERED 24H", value: (e) => e.last_24h.recovered },
      { header: "BACKSTOP 24H", value: (e) => e.last_24h.found },
    ],
    rows,
  );

export const recoveryCommands: Command[] = [
  {
    words: ["recovery", "show"],
    summary: "Show how lost webhook deliveries are found, per entity, and what that found in the last 24 hours",
    options: {},
    run: async (ctx) => {
      const data = await unwrap(ctx.api().GET("/api/v1/recovery"));
      const head = !data.enabled
        ? "Delivery recovery is off (DELIVERY_RECOVERY_SECONDS=0).\n"
        : data.last_pass
          ? `Every ${data.interval_seconds} s; last pass ${data.last_pass.at} (${data.last_pass.github_calls} GitHub calls).\n`
          : `Every ${data.interval_seconds} s; no pass yet.\n`;
      const problems = data.entities.flatMap((e) =>
        e.means
          .filter((m) => m.status && m.status !== "ok")
          .map((m) => `  ${e.entity}, ${WHERE[m.kind] ?? m.kind}: ${m.status}${m.detail ? ` (${m.detail})` : ""}`),
      );
      const tail = problems.length ? `\nProblems (edgerunner doctor says what to do):\n${problems.join("\n")}\n` : "";
      return { data, text: head + recoveryTable(data.entities) + tail };
    },
  },
  {
    words: ["recovery", "run"],
    summary: "Look for webhook deliveries GitHub could not make now, and take them in",
    options: {},
    run: async (ctx) => {
      const r = await unwrap(ctx.api().POST("/api/v1/recovery/run"));
      const text =
        `${r.new_failures} new failed deliveries, ${r.recovered} recovered, ${r.backstop_found} jobs found by the backstop ` +
        `(${r.watches} watches, ${r.github_calls} GitHub calls, ${r.duration_ms} ms)${r.more ? "; more is left for the next pass, in a few seconds" : ""}.\n`;
      return { data: r, text };
    },
  },
];
