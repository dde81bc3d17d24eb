import { createRoute, z } from "@hono/zod-openapi";
import { type EntityPath, entityPaths } from "../api/entity-paths";
import { InstanceSchema, instanceView } from "../api/instance-view";
import { createDb, type Db } from "../db/client";
import { findEntity } from "../db/entity-store";
import { scaleSetInstances } from "../db/instance-store";
import { providerIdByName } from "../db/provider-store";
import {
  deleteScaleSet,
  findScaleSet,
  insertScaleSet,
  listScaleSets,
  liveInstances,
  type ScaleSetWithOwners,
  scaleSetNameTaken,
  scaleSetUse,
  updateScaleSet,
} from "../db/scaleset-store";
import { osArches, osTypes, scaleSetIntakes } from "../db/schema";
import { entityFullName } from "../github/entity-names";
import { conflict, inUse, invalidBody } from "../http/errors";
import {
  conflictResponse,
  errorResponses,
  IdParam,
  iso,
  jsonBody,
  jsonResponse,
  notFoundResponse,
  now,
  ResourceName,
  Timestamp,
} from "../http/openapi";
import { requireFound } from "../http/require-found";
import { resourceRoutes } from "../http/resource-routes";
import { createRouter } from "../http/router";
import { sentFields } from "../http/sent-fields";
import { normalizeLabels } from "../intake/labels";
import { routeWaiting } from "../intake/waiting-jobs";
import { nudgeScaleSet, scaleSetObject } from "../scaleset/stub";

const Label = z.string().trim().min(1).max(256);
const Labels = z
  .array(Label)
  .min(1)
  .max(100)
  .transform(normalizeLabels)
  .openapi({ description: "Runner labels; stored lower-cased, de-duplicated and sorted", example: ["self-hosted", "linux", "x64"] });
const ExtraSpecs = z
  .record(z.string(), z.unknown())
  .refine((v) => JSON.stringify(v).length <= 16 * 1024, "must serialize to at most 16 KiB")
  .openapi({ description: "Provider-specific JSON object, passed to the shim as-is" });

const fields = {
  provider_name: ResourceName,
  labels: Labels,
  min_idle_runners: z.int().min(0).max(10_000),
  max_runners: z.int().min(1).max(10_000),
  image: z.string().min(1).max(512),
  flavor: z.string().min(1).max(512),
  os_type: z.enum(osTypes),
  os_arch: z.enum(osArches),
  bootstrap_timeout: z
    .int()
    .min(1)
    .max(24 * 60)
    .openapi({ description: "Minutes a new runner may take to become idle" }),
  runner_prefix: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,31}$/, "1-32 letters, digits and '-', starting with a letter or digit"),
  runner_group: z.string().max(256),
  extra_specs: ExtraSpecs,
  enabled: z.boolean(),
  priority: z.int().min(0).max(1000).openapi({ description: "Higher wins when several scale sets match a job" }),
  jit_config_enabled: z.boolean().openapi({
    description:
      "Register runners with a just-in-time config (needs GHES >= 3.10). false: each machine fetches a one-time registration token and runs config.sh",
  }),
  intake: z.enum(scaleSetIntakes).openapi({
    description:
      "Where jobs come from. webhook: workflow_job deliveries matched by labels. scaleset_api: GitHub's runner scale set API (jobs use `runs-on: <scale set name>`; the coordinator long-polls GitHub, no webhook needed; needs jit_config_enabled)",
  }),
};

const idleWithinMax = (v: { min_idle_runners?: number | undefined; max_runners?: number | undefined }) =>
  v.min_idle_runners === undefined || v.max_runners === undefined || v.min_idle_runners <= v.max_runners;
const idleWithinMaxIssue = { message: "min_idle_runners cannot exceed max_runners", path: ["min_idle_runners"] };
// Runners of a runner scale set come from its own generatejitconfig: there is no registration-token path.
const apiIntakeUsesJit = (v: { intake?: string | undefined; jit_config_enabled?: boolean | undefined }) =>
  !(v.intake === "scaleset_api" && v.jit_config_enabled === false);
const apiIntakeUsesJitIssue = { message: "intake scaleset_api needs jit_config_enabled", path: ["jit_config_enabled"] };

const CreateScaleSet = z
  .strictObject({
    name: ResourceName,
    provider_name: fields.provider_name,
    labels: fields.labels,
    min_idle_runners: fields.min_idle_runners.default(0),
    max_runners: fields.max_runners,
    image: fields.image,
    flavor: fields.flavor,
    os_type: fields.os_type.default("linux"),
    os_arch: fields.os_arch.default("amd64"),
    bootstrap_timeout: fields.bootstrap_timeout.default(20),
    runner_prefix: fields.runner_prefix.default("edgerunner"),
    runner_group: fields.runner_group.default(""),
    extra_specs: fields.extra_specs.default({}),
    enabled: fields.enabled.default(true),
    priority: fields.priority.default(0),
    jit_config_enabled: fields.jit_config_enabled.default(true),
    intake: fields.intake.default("webhook"),
  })
  .refine(idleWithinMax, idleWithinMaxIssue)
  .refine(apiIntakeUsesJit, apiIntakeUsesJitIssue)
  .openapi("CreateScaleSet");

const UpdateScaleSet = z
  .strictObject({
    name: ResourceName.optional(),
    ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])),
  } as { name: z.ZodOptional<typeof ResourceName> } & { [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]> })
  .refine(idleWithinMax, idleWithinMaxIssue)
  .refine(apiIntakeUsesJit, apiIntakeUsesJitIssue)
  .openapi("UpdateScaleSet");

const ScaleSetSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    entity: z.object({ kind: z.enum(["repository", "organization", "enterprise"]), id: z.uuid(), name: z.string() }),
    endpoint: z.string(),
    provider_name: z.string(),
    labels: z.array(z.string()),
    min_idle_runners: z.int(),
    max_runners: z.int(),
    image: z.string(),
    flavor: z.string(),
    os_type: z.enum(osTypes),
    os_arch: z.enum(osArches),
    bootstrap_timeout: z.int(),
    runner_prefix: z.string(),
    runner_group: z.string(),
    extra_specs: z.record(z.string(), z.unknown()),
    enabled: z.boolean(),
    priority: z.int(),
    jit_config_enabled: z.boolean(),
    intake: z.enum(scaleSetIntakes),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("ScaleSet");

const ObjectStatusSchema = z
  .object({
    scale_set_id: z.string().nullable(),
    next_wake_at: Timestamp.nullable(),
    create_backoff: z.object({
      failures: z.int(),
      last_failure_at: Timestamp.nullable(),
      hard_limited_at: Timestamp.nullable().openapi({ description: "Set when creation stopped after too many straight failures" }),
      create_allowed_at: Timestamp.nullable(),
    }),
    last_reconcile: z
      .object({
        at: z.number(),
        durationMs: z.number(),
        summary: z.record(z.string(), z.unknown()).nullable(),
        actions: z.record(z.string(), z.number()),
        error: z.string().nullable(),
        d1RoundTrips: z.number(),
        passes: z.number(),
      })
      .nullable(),
    pending_operations: z.int(),
    delete_retries: z.int(),
    listener: z
      .object({
        github_scale_set_id: z.int().nullable(),
        session_open: z.boolean(),
        last_message_id: z.int().openapi({ description: "The last queue message whose effects are stored and which was acknowledged" }),
        statistics: z
          .record(z.string(), z.number())
          .nullable()
          .openapi({ description: "GitHub's last statistics for the runner scale set (totalAssignedJobs, …)" }),
        failures: z.int(),
        retry_at: Timestamp.nullable(),
        last_error: z.string().nullable(),
      })
      .nullable()
      .openapi({ description: "The runner scale set API listener (intake scaleset_api); null if it never ran" }),
  })
  .openapi("ScaleSetObjectStatus");

const ScaleSetDetailSchema = ScaleSetSchema.extend({ status: ObjectStatusSchema }).openapi("ScaleSetDetail");

const view = ({ scaleSet: s, entity: e, providerName }: ScaleSetWithOwners): z.infer<typeof ScaleSetSchema> => ({
  id: s.id,
  name: s.name,
  entity: { kind: e.kind, id: e.id, name: entityFullName(e) },
  endpoint: e.endpointName,
  provider_name: providerName,
  labels: s.labels,
  min_idle_runners: s.minIdleRunners,
  max_runners: s.maxRunners,
  image: s.image,
  flavor: s.flavor,
  os_type: s.osType,
  os_arch: s.osArch,
  bootstrap_timeout: s.bootstrapTimeout,
  runner_prefix: s.runnerPrefix,
  runner_group: s.runnerGroup,
  extra_specs: s.extraSpecs,
  enabled: s.enabled,
  priority: s.priority,
  jit_config_enabled: s.jitConfigEnabled,
  intake: s.intake,
  created_at: iso(s.createdAt)!,
  updated_at: iso(s.updatedAt)!,
});

/** The scale set with its entity and provider name, or 404. */
async function requireScaleSet(db: Db, id: string): Promise<ScaleSetWithOwners> {
  return requireFound(await findScaleSet(db, id), "scale set", id);
}

async function knownProviderId(db: Db, name: string): Promise<string> {
  const id = await providerIdByName(db, name);
  if (!id) throw invalidBody([{ path: "provider_name", message: `unknown provider '${name}'` }]);
  return id;
}

async function assertNameFree(db: Db, entityId: string, name: string) {
  if (await scaleSetNameTaken(db, entityId, name)) throw conflict("this entity already has a scale set with this name", { name });
}

const tags = ["Scale sets"];
const routes = resourceRoutes({ collection: "/scalesets", item: "/scalesets/{id}", tags, params: IdParam, view: ScaleSetSchema });

function registerEntityScaleSets(router: ReturnType<typeof createRouter>, { kind, path }: EntityPath) {
  return router
    .openapi(
      createRoute({
        method: "get",
        path: `/${path}/{id}/scalesets`,
        tags,
        summary: `List a ${kind}'s scale sets`,
        request: { params: IdParam },
        responses: { 200: jsonResponse(z.array(ScaleSetSchema), "Scale sets"), ...errorResponses, ...notFoundResponse },
      }),
      async (c) => {
        const { id } = c.req.valid("param");
        const db = createDb(c.env);
        requireFound(await findEntity(db, kind, id), kind, id);
        const rows = await listScaleSets(db, id);
        return c.json(rows.map(view), 200);
      },
    )
    .openapi(
      createRoute({
        method: "post",
        path: `/${path}/{id}/scalesets`,
        tags,
        summary: `Create a scale set for a ${kind}`,
        request: { params: IdParam, body: jsonBody(CreateScaleSet) },
        responses: {
          201: jsonResponse(ScaleSetSchema, "Created"),
          ...errorResponses,
          ...notFoundResponse,
          ...conflictResponse,
        },
      }),
      async (c) => {
        const { id: entityId } = c.req.valid("param");
        const body = c.req.valid("json");
        const db = createDb(c.env);
        requireFound(await findEntity(db, kind, entityId), kind, entityId);
        const providerId = await knownProviderId(db, body.provider_name);
        await assertNameFree(db, entityId, body.name);
        const id = crypto.randomUUID();
        const t = now();
        await insertScaleSet(db, {
          id,
          name: body.name,
          entityId,
          providerId,
          labels: body.labels,
          minIdleRunners: body.min_idle_runners,
          maxRunners: body.max_runners,
          image: body.image,
          flavor: body.flavor,
          osType: body.os_type,
          osArch: body.os_arch,
          bootstrapTimeout: body.bootstrap_timeout,
          runnerPrefix: body.runner_prefix,
          runnerGroup: body.runner_group,
          extraSpecs: body.extra_specs,
          enabled: body.enabled,
          priority: body.priority,
          jitConfigEnabled: body.jit_config_enabled,
          intake: body.intake,
          createdAt: t,
          updatedAt: t,
        });
        await routeWaiting(c, entityId, id, "scale set created");
        await nudgeScaleSet(c.env, id);
        return c.json(view(await requireScaleSet(db, id)), 201);
      },
    );
}

export const scaleSetRoutes = entityPaths
  .reduce(registerEntityScaleSets, createRouter())
  .openapi(routes.list("List all scale sets", "Scale sets"), async (c) => {
    const rows = await listScaleSets(createDb(c.env));
    return c.json(rows.map(view), 200);
  })
  .openapi(
    createRoute({
      method: "get",
      path: "/scalesets/{id}",
      tags,
      summary: "Show a scale set",
      request: { params: IdParam },
      responses: { 200: jsonResponse(ScaleSetDetailSchema, "Scale set"), ...errorResponses, ...notFoundResponse },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const row = view(await requireScaleSet(createDb(c.env), id));
      return c.json({ ...row, status: await scaleSetObject(c.env, id).status(id) }, 200);
    },
  )
  .openapi(routes.update("Update a scale set", UpdateScaleSet, { renames: true }), async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const db = createDb(c.env);
    const current = await requireScaleSet(db, id);
    const s = current.scaleSet;
    const minIdle = body.min_idle_runners ?? s.minIdleRunners;
    const max = body.max_runners ?? s.maxRunners;
    if ((body.intake ?? s.intake) === "scaleset_api" && !(body.jit_config_enabled ?? s.jitConfigEnabled)) {
      throw invalidBody([{ path: "jit_config_enabled", message: "intake scaleset_api needs jit_config_enabled" }]);
    }
    if (minIdle > max) {
      throw invalidBody([{ path: "min_idle_runners", message: `min_idle_runners (${minIdle}) cannot exceed max_runners (${max})` }]);
    }
    let providerId = s.providerId;
    if (body.provider_name !== undefined && body.provider_name !== current.providerName) {
      providerId = await knownProviderId(db, body.provider_name);
      const live = await liveInstances(db, id);
      if (live.length) throw inUse("cannot change the provider while instances are live", { instances: live });
    }
    if (body.name !== undefined && body.name !== s.name) await assertNameFree(db, s.entityId, body.name);
    await updateScaleSet(db, id, {
      ...sentFields(body, {
        name: "name",
        labels: "labels",
        image: "image",
        flavor: "flavor",
        os_type: "osType",
        os_arch: "osArch",
        bootstrap_timeout: "bootstrapTimeout",
        runner_prefix: "runnerPrefix",
        runner_group: "runnerGroup",
        extra_specs: "extraSpecs",
        enabled: "enabled",
        priority: "priority",
        jit_config_enabled: "jitConfigEnabled",
        intake: "intake",
      }),
      providerId,
      minIdleRunners: minIdle,
      maxRunners: max,
      updatedAt: now(),
    });
    if (body.labels !== undefined || body.enabled !== undefined || body.priority !== undefined || body.intake !== undefined)
      await routeWaiting(c, s.entityId, id, "scale set changed");
    // Takes effect at once: the object re-plans with the new settings now.
    await nudgeScaleSet(c.env, id);
    return c.json(view(await requireScaleSet(db, id)), 200);
  })
  .openapi(routes.remove("Delete a scale set that has no live instances"), async (c) => {
    const { id } = c.req.valid("param");
    const db = createDb(c.env);
    const use = requireFound(await scaleSetUse(db, id), "scale set", id);
    if (use.liveInstances.length) throw inUse("scale set still has live instances", { instances: use.liveInstances });
    await deleteScaleSet(db, id);
    // The object notices its scale set is gone and clears its own state.
    await nudgeScaleSet(c.env, id);
    return c.body(null, 204);
  })
  .openapi(
    createRoute({
      method: "get",
      path: "/scalesets/{id}/instances",
      tags,
      summary: "List a scale set's instances",
      request: { params: IdParam },
      responses: { 200: jsonResponse(z.array(InstanceSchema), "Instances"), ...errorResponses, ...notFoundResponse },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const rows = requireFound(await scaleSetInstances(createDb(c.env), id), "scale set", id);
      return c.json(rows.map(instanceView), 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/scalesets/{id}/reconcile",
      tags,
      summary: "Reconcile a scale set now",
      request: { params: IdParam },
      responses: { 200: jsonResponse(ObjectStatusSchema, "Reconciled"), ...errorResponses, ...notFoundResponse },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      await requireScaleSet(createDb(c.env), id);
      return c.json(await scaleSetObject(c.env, id).reconcileNow(id), 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/scalesets/{id}/reset",
      tags,
      summary: "Lift a scale set's create backoff and hard limit",
      request: { params: IdParam },
      responses: { 200: jsonResponse(ObjectStatusSchema, "Reset"), ...errorResponses, ...notFoundResponse },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      await requireScaleSet(createDb(c.env), id);
      return c.json(await scaleSetObject(c.env, id).resetBackoff(id), 200);
    },
  );
