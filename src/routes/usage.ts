import { createRoute, z } from "@hono/zod-openapi";
import { readUsage } from "../db/metrics/usage-store";
import { errorResponses, jsonResponse } from "../http/openapi";
import { createRouter } from "../http/router";
import { largestInvocations } from "../lib/invocation-ledger";
import { pendingUsageRows } from "../lib/usage-tally";
import { UNITS } from "../usage/price-table";
import { monthOf, usageReport } from "../usage/usage-report";

/**
 * `GET /usage`: what the coordinator spent this month (or another) in Cloudflare's billing units,
 * by cause and by day, and its price on each plan (docs/performance.md "What it costs"). Reads
 * the month's rows of `usage_days` (one statement) and adds what this isolate has tallied and not
 * written yet (at most 15 minutes' worth); other isolates' unwritten counts are not in it.
 */

const UnitsSchema = z.object(Object.fromEntries(UNITS.map((u) => [u, z.number()])) as Record<(typeof UNITS)[number], z.ZodNumber>);
const ShareSchema = z.record(z.string(), z.number());

const UsageSchema = z
  .object({
    month: z.string().openapi({ example: "2026-12" }),
    from: z.string().openapi({ example: "2026-12-01" }),
    to: z.string().openapi({ example: "2026-12-07" }),
    days_elapsed: z.number(),
    units: UnitsSchema.openapi({
      description: "The month so far; do_gb_s is Durable Object active time at 128 MB; worker_cpu_ms is not counted (0)",
    }),
    today: UnitsSchema,
    by_kind: z.array(z.object({ kind: z.string(), units: UnitsSchema, subrequests: z.number() })).openapi({
      description:
        "What caused it: webhook, bootstrap, shim_callback, dashboard, api, metrics, retention, and the scale set objects' alarm, reconcile, listener and RPC methods",
    }),
    by_day: z.array(z.object({ day: z.string(), units: UnitsSchema })),
    free_plan: z.object({
      averageDay: UnitsSchema,
      share: ShareSchema.openapi({ description: "The average day's share of each daily limit" }),
      near: z.array(z.string()),
      exceeded: z.array(z.string()),
      today_share: ShareSchema,
      today_near: z.array(z.string()),
    }),
    paid_plan: z.object({ totalUsd: z.number(), baseUsd: z.number(), overageUsd: ShareSchema }),
    cpu_counted: z.literal(false),
    prices: z.object({ checked: z.string(), sources: z.record(z.string(), z.string()) }),
    largest_invocations: z
      .array(
        z.object({
          kind: z.string(),
          invocations: z.int(),
          subrequests: z.int(),
          d1_queries: z.int(),
        }),
      )
      .openapi({
        description: "Since the answering isolate started: the most one invocation of each kind spent of the per-invocation limits",
      }),
  })
  .openapi("Usage");

const Query = z.object({
  month: z
    .string()
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/, "a month as YYYY-MM")
    .optional()
    .openapi({ description: "YYYY-MM (UTC); the current month when absent" }),
});

export const usageRoutes = createRouter().openapi(
  createRoute({
    method: "get",
    path: "/usage",
    tags: ["Usage"],
    summary: "What the coordinator spent in Cloudflare's billing units, and its price on each plan",
    description:
      "Worker and Durable Object requests, Durable Object active time (GB-s), D1 and Durable Object storage rows read and written, " +
      "tallied where they are spent and attributed to what caused them; the Free plan's daily limits and the Workers Paid bill for the month.",
    request: { query: Query },
    responses: { 200: jsonResponse(UsageSchema, "The month's usage"), ...errorResponses },
  }),
  async (c) => {
    const now = Date.now();
    const month = c.req.valid("query").month ?? monthOf(now).month;
    const current = monthOf(now);
    const rows = await readUsage(c.env.DB, `${month}-01`, `${month}-31`);
    if (month === current.month) rows.push(...pendingUsageRows(current.to));
    const report = usageReport(rows, month, now);
    const largest = largestInvocations().map((l) => ({
      kind: l.kind,
      invocations: l.invocations,
      subrequests: l.largest.subrequests,
      d1_queries: l.largest.d1Queries,
    }));
    return c.json({ ...report, largest_invocations: largest }, 200);
  },
);
