import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses, jsonResponse, Timestamp } from "../http/openapi";
import { createRouter } from "../http/router";
import { readRecoveryView } from "../recovery/recovery-view";
import { recoveryObject } from "../recovery/rpc";

/**
 * Delivery recovery (src/recovery/, docs/delivery-recovery.md): `GET /recovery` says how each
 * entity's lost webhook deliveries are found and what that found lately; `POST /recovery/run`
 * runs a pass now (after an outage, rather than wait for the next one).
 */

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const MeansSchema = z.object({
  kind: z.enum(["repository", "organization", "app", "backstop"]).openapi({
    description:
      "repository / organization: the entity's own hook's record of deliveries at GitHub; app: its App's webhook's; backstop: its queued jobs asked of the forge, where no record can be read",
  }),
  watch: z.string().openapi({ example: "hook:0f0c2a4e-8a4b-4f6e-9d55-2b8c1b1f5b1e" }),
  status: z.string().nullable().openapi({
    description:
      "ok, or what the last look found: forbidden, not_found, no_hook, rate_limited, failing, unreachable, budget, error; null: not looked at yet",
  }),
  detail: z.string().nullable(),
  since: Timestamp.nullable(),
  reason: z.string().optional().openapi({ description: "The backstop: why it looks instead of a hook" }),
});

const RecoverySchema = z
  .object({
    enabled: z.boolean().openapi({ description: "false when DELIVERY_RECOVERY_SECONDS is 0" }),
    interval_seconds: z.number(),
    last_pass: z
      .object({ at: Timestamp, duration_ms: z.int(), github_calls: z.int(), watches: z.int() })
      .nullable()
      .openapi({ description: "The last pass, null before the first" }),
    entities: z.array(
      z.object({
        entity_id: z.string(),
        entity: z.string().openapi({ example: "repository octo/app" }),
        means: z.array(MeansSchema),
        last_24h: z.object({
          failed: z.int().openapi({ description: "Failed deliveries seen (GitHub got no 2xx)" }),
          recovered: z.int().openapi({ description: "Of those, taken in afterwards" }),
          found: z.int().openapi({ description: "Jobs the backstop found that no delivery had brought" }),
        }),
      }),
    ),
  })
  .openapi("DeliveryRecovery");

const PassSchema = z
  .object({
    at: Timestamp,
    duration_ms: z.int(),
    github_calls: z.int(),
    watches: z.int(),
    new_failures: z.int().openapi({ description: "Failed deliveries listed that were new" }),
    recovered: z.int(),
    backstop_found: z.int(),
    more: z.boolean().openapi({ description: "Work was left for the next pass (which comes in a few seconds)" }),
  })
  .openapi("DeliveryRecoveryPass");

export const recoveryRoutes = createRouter()
  .openapi(
    createRoute({
      method: "get",
      path: "/recovery",
      tags: ["Recovery"],
      summary: "How lost webhook deliveries are found, per entity",
      description:
        "GitHub makes one attempt per webhook delivery and never retries. For each entity whose jobs can start a runner " +
        "here: the hooks whose record of deliveries is read (or the backstop, where none can be), how the last look went, " +
        "and the last 24 hours' figures. Reads D1 only.",
      responses: { 200: jsonResponse(RecoverySchema, "Delivery recovery's state"), ...errorResponses },
    }),
    async (c) => {
      const view = await readRecoveryView(c.env, Date.now());
      return c.json(
        {
          enabled: view.intervalMs > 0,
          interval_seconds: view.intervalMs / 1000,
          last_pass: view.lastPass && {
            at: iso(view.lastPass.at)!,
            duration_ms: view.lastPass.durationMs,
            github_calls: view.lastPass.calls,
            watches: view.lastPass.watches,
          },
          entities: [...view.byEntity]
            .filter(([, e]) => e !== null)
            .map(([id, e]) => ({
              entity_id: id,
              entity: e!.entity,
              means: e!.means.map((m) => ({ ...m, since: iso(m.since) })),
              last_24h: e!.last24h,
            })),
        },
        200,
      );
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/recovery/run",
      tags: ["Recovery"],
      summary: "Look for lost deliveries now",
      description:
        "Runs a delivery recovery pass now (or waits for the one under way) and says what it did: after an outage, rather " +
        "than wait up to DELIVERY_RECOVERY_SECONDS for the next one.",
      responses: { 200: jsonResponse(PassSchema, "What the pass did"), ...errorResponses },
    }),
    async (c) => {
      const r = await recoveryObject(c.env).runNow();
      return c.json(
        {
          at: iso(r.at)!,
          duration_ms: r.durationMs,
          github_calls: r.calls,
          watches: r.watches,
          new_failures: r.newFailures,
          recovered: r.recovered,
          backstop_found: r.backstopFound,
          more: r.more,
        },
        200,
      );
    },
  );
