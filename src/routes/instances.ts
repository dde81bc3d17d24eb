import { createRoute, z } from "@hono/zod-openapi";
import { InstanceSchema, instanceView } from "../api/instance-view";
import { createDb } from "../db/client";
import { findInstance, instanceWithTransitions, listInstances } from "../db/runner/instance-lookups";
import { instanceStatuses } from "../db/runner/schema";
import { ErrorSchema, invalidTransition, notFound } from "../http/errors";
import { errorResponses, iso, jsonResponse, notFoundResponse, Timestamp } from "../http/openapi";
import { requireFound } from "../http/require-found";
import { createRouter } from "../http/router";
import { scaleSetObject } from "../scaleset/stub";

const TransitionSchema = z
  .object({
    at: Timestamp,
    field: z.enum(["status", "runner_status"]),
    from: z.string().nullable(),
    to: z.string(),
    reason: z.string(),
  })
  .openapi("InstanceTransition");

const InstanceDetailSchema = InstanceSchema.extend({
  transitions: z.array(TransitionSchema).openapi({ description: "Newest first, at most 100" }),
}).openapi("InstanceDetail");

const ListQuery = z.object({
  status: z.enum(instanceStatuses).optional(),
  scaleset_id: z.uuid().optional(),
});

const tags = ["Instances"];
const InstanceNameParam = z.object({
  name: z
    .string()
    .min(1)
    .max(128)
    .openapi({ param: { name: "name", in: "path" } }),
});

export const instanceRoutes = createRouter()
  .openapi(
    createRoute({
      method: "get",
      path: "/instances",
      tags,
      summary: "List instances",
      request: { query: ListQuery },
      responses: { 200: jsonResponse(z.array(InstanceSchema), "Instances"), ...errorResponses },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const rows = await listInstances(createDb(c.env), { status: q.status, scaleSetId: q.scaleset_id });
      return c.json(rows.map(instanceView), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/instances/{name}",
      tags,
      summary: "Show an instance and its recent status transitions",
      request: { params: InstanceNameParam },
      responses: { 200: jsonResponse(InstanceDetailSchema, "Instance"), ...errorResponses, ...notFoundResponse },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const found = requireFound(await instanceWithTransitions(createDb(c.env), name), "instance", name);
      const { instance, transitions } = found;
      return c.json(
        {
          ...instanceView(instance),
          transitions: transitions.map((t) => ({
            at: iso(t.at)!,
            field: t.field,
            from: t.from,
            to: t.to,
            reason: t.reason,
          })),
        },
        200,
      );
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/instances/{name}",
      tags,
      summary: "Delete an instance (force=true ignores provider errors)",
      request: {
        params: InstanceNameParam,
        query: z.object({ force: z.enum(["true", "false"]).optional().openapi({ description: "Ignore provider errors" }) }),
      },
      responses: {
        202: jsonResponse(z.object({ name: z.string(), status: z.enum(instanceStatuses) }), "Deletion under way"),
        ...errorResponses,
        ...notFoundResponse,
        409: jsonResponse(ErrorSchema, "The instance cannot be deleted from its status"),
      },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const force = c.req.valid("query").force === "true";
      const row = requireFound(await findInstance(c.env.DB, name), "instance", name);
      if (row.status === "deleted") throw invalidTransition(409, "instance is already deleted", { name });
      // The scale set's object is the only writer of instance lifecycles: it makes the move.
      const result = await scaleSetObject(c.env, row.scaleSetId).deleteInstance(row.scaleSetId, name, force);
      if ("error" in result) {
        if (result.error === "not_found") throw notFound("instance", name);
        throw invalidTransition(409, "instance cannot be deleted now", { reason: result.error });
      }
      return c.json({ name, status: result.status }, 202);
    },
  );
