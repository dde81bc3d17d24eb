import { createRoute, z } from "@hono/zod-openapi";
import { type EntityPath, entityPaths } from "../api/entity-paths";
import { InstanceSchema, instanceView } from "../api/instance-view";
import { CreateScaleSet, defaultJitConfigTiming, hardCapIssue, SHAPED_FLAVOR, UpdateScaleSet } from "../api/scaleset-input";
import { ObjectStatusSchema } from "../api/scaleset-object-status";
import { ScaleSetDetailSchema, ScaleSetSchema, scaleSetView as view } from "../api/scaleset-view";
import { assertShapedScaleSet } from "../api/shaped-scaleset-check";
import { createDb, type Db } from "../db/client";
import { findEntity } from "../db/directory/entity-store";
import { entityForge } from "../db/github/github-endpoint-store";
import { providerIdByName } from "../db/providers/provider-store";
import { scaleSetInstances } from "../db/runner/instance-lookups";
import { jitWaitingCount } from "../db/runner/jit-mint-store";
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
} from "../db/scaleset/scaleset-store";
import { defaultIntakeFor, timingFor } from "../forges/forgejo/scaleset-rules";
import { defaultJitConfigEnabled } from "../forges/gitea/scaleset-rules";
import { forgeScaleSetIssues } from "../forges/scaleset-rules";
import { conflict, inUse, invalidBody } from "../http/errors";
import { conflictResponse, errorResponses, IdParam, jsonBody, jsonResponse, notFoundResponse, now } from "../http/openapi";
import { requireFound } from "../http/require-found";
import { resourceRoutes } from "../http/resource-routes";
import { createRouter } from "../http/router";
import { sentFields } from "../http/sent-fields";
import { routeWaiting } from "../intake/waiting-jobs";
import { logEvent } from "../observability/log";
import { schedulesAboveMax } from "../scaleset/schedule/schedule-validation";
import { nudgeScaleSet, scaleSetObject } from "../scaleset/stub";
import { defaultImageName } from "../shapes/shape-bounds";

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
        const entity = requireFound(await findEntity(db, kind, entityId), kind, entityId);
        // The endpoint's forge decides the defaults and what is allowed: no JIT on Gitea, Forgejo polls (src/forges/*/scaleset-rules.ts).
        const forge = await entityForge(db, entity.id);
        const intake = body.intake ?? defaultIntakeFor(forge);
        const jitConfigEnabled = body.jit_config_enabled ?? defaultJitConfigEnabled(forge);
        const forgeIssues = forgeScaleSetIssues({
          forge,
          intake,
          jitConfigEnabled,
          jitConfigTimingSent: body.jit_config_timing,
          minIdleRunners: body.min_idle_runners,
          schedules: body.schedules,
        });
        if (forgeIssues.length) throw invalidBody(forgeIssues);
        const providerId = await knownProviderId(db, body.provider_name);
        await assertNameFree(db, entityId, body.name);
        const id = crypto.randomUUID();
        const shape = body.shape;
        if (shape) {
          const facts = { minIdleRunners: body.min_idle_runners, scheduleCount: body.schedules.length, providerName: body.provider_name };
          await assertShapedScaleSet(
            c.env,
            db,
            { id, shape, forge, intake, jitConfigEnabled, extraSpecs: body.extra_specs, ...facts },
            true,
          );
        }
        const t = now();
        await insertScaleSet(db, {
          id,
          name: body.name,
          entityId,
          providerId,
          labels: body.labels,
          minIdleRunners: body.min_idle_runners,
          maxRunners: body.max_runners,
          // A shaped scale set's machines get their job's image and flavor: these show its default image and "per-job".
          image: shape ? shape.images[defaultImageName(shape)]! : body.image!,
          flavor: shape ? SHAPED_FLAVOR : body.flavor!,
          shape,
          osType: body.os_type,
          osArch: shape ? shape.architectures[0] : body.os_arch,
          bootstrapTimeout: body.bootstrap_timeout,
          runnerPrefix: body.runner_prefix,
          runnerGroup: body.runner_group,
          extraSpecs: body.extra_specs,
          enabled: body.enabled,
          priority: body.priority,
          jitConfigEnabled,
          intake,
          jitConfigTiming: timingFor(forge, intake, body.jit_config_timing ?? defaultJitConfigTiming(intake)),
          bootTimeSeconds: body.boot_time_seconds,
          maxRunnerLifetimeSeconds: body.max_runner_lifetime_seconds,
          runnerLifetimeHardCapSeconds: body.runner_lifetime_hard_cap_seconds,
          maxMachineHoursPerDay: body.max_machine_hours_per_day,
          schedules: body.schedules,
          runnerDownloadUrl: body.runner_download_url,
          runnerDownloadSha256: body.runner_download_sha256,
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
      const [status, jitWaiting] = await Promise.all([scaleSetObject(c.env, id).status(id), jitWaitingCount(c.env.DB, id)]);
      return c.json({ ...row, status, jit_waiting_instances: jitWaiting }, 200);
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
    // Moving to the scale set API moves the JIT mint into the object (its own endpoint); asking for on_boot there is refused.
    const intake = body.intake ?? s.intake;
    if (intake === "scaleset_api" && body.jit_config_timing === "on_boot") {
      throw invalidBody([{ path: "jit_config_timing", message: "intake scaleset_api mints JIT configs before_create" }]);
    }
    const forge = await entityForge(db, s.entityId);
    const jitConfigEnabled = body.jit_config_enabled ?? s.jitConfigEnabled;
    const forgeIssues = forgeScaleSetIssues({
      forge,
      intake,
      jitConfigEnabled,
      jitConfigTimingSent: body.jit_config_timing,
      minIdleRunners: minIdle,
      schedules: body.schedules ?? s.schedules,
    });
    if (forgeIssues.length) throw invalidBody(forgeIssues);
    const jitConfigTiming = timingFor(forge, intake, body.jit_config_timing ?? s.jitConfigTiming);
    if (minIdle > max) {
      throw invalidBody([{ path: "min_idle_runners", message: `min_idle_runners (${minIdle}) cannot exceed max_runners (${max})` }]);
    }
    // The hard cap against the lifetime, each as sent or as stored.
    const capIssue = hardCapIssue(
      body.max_runner_lifetime_seconds ?? s.maxRunnerLifetimeSeconds,
      body.runner_lifetime_hard_cap_seconds === undefined ? s.runnerLifetimeHardCapSeconds : body.runner_lifetime_hard_cap_seconds,
    );
    if (capIssue) throw invalidBody([{ path: "runner_lifetime_hard_cap_seconds", message: capIssue }]);
    // A schedule sent is checked against the max it will have; a max lowered, against the schedule kept.
    const above = schedulesAboveMax(body.schedules ?? s.schedules, max);
    if (above.length) {
      throw invalidBody(
        above.map((p) => ({ path: body.schedules ? ["schedules", ...p.path].join(".") : "max_runners", message: p.message })),
      );
    }
    let providerId = s.providerId;
    if (body.provider_name !== undefined && body.provider_name !== current.providerName) {
      providerId = await knownProviderId(db, body.provider_name);
      const live = await liveInstances(db, id);
      if (live.length) throw inUse("cannot change the provider while instances are live", { instances: live });
    }
    if (body.name !== undefined && body.name !== s.name) await assertNameFree(db, s.entityId, body.name);
    if (body.shape !== undefined && !s.shape)
      throw conflict("a scale set cannot become shaped: create a shaped scale set beside it", { shape: "not shaped" });
    const shape = body.shape ?? s.shape;
    if (shape) {
      const providerName = body.provider_name ?? current.providerName;
      const extraSpecs = body.extra_specs ?? s.extraSpecs;
      const facts = { minIdleRunners: minIdle, scheduleCount: (body.schedules ?? s.schedules).length, providerName, extraSpecs };
      const askProvider = providerName !== current.providerName || body.extra_specs !== undefined;
      await assertShapedScaleSet(c.env, db, { id, shape, forge, intake, jitConfigEnabled, ...facts }, askProvider);
    }
    await updateScaleSet(db, id, {
      ...(body.shape && {
        shape: body.shape,
        image: body.shape.images[defaultImageName(body.shape)]!,
        osArch: body.shape.architectures[0],
      }),
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
        boot_time_seconds: "bootTimeSeconds",
        max_runner_lifetime_seconds: "maxRunnerLifetimeSeconds",
        runner_lifetime_hard_cap_seconds: "runnerLifetimeHardCapSeconds",
        max_machine_hours_per_day: "maxMachineHoursPerDay",
        schedules: "schedules",
        runner_download_url: "runnerDownloadUrl",
        runner_download_sha256: "runnerDownloadSha256",
      }),
      providerId,
      jitConfigTiming,
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
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/scalesets/{id}/spend-guard/reset",
      tags,
      summary: "Lift a scale set's spend guard for the rest of the UTC day",
      description:
        "Sets spend_reset_at to now: the scale set creates again although its machine-hours today reached max_machine_hours_per_day, until 00:00 UTC. Answers the object's status after a reconcile.",
      request: { params: IdParam },
      responses: { 200: jsonResponse(ObjectStatusSchema, "Spend guard lifted"), ...errorResponses, ...notFoundResponse },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const db = createDb(c.env);
      await requireScaleSet(db, id);
      // Not updated_at: an update lifts the create hard limit (backoff.ts), which this is not.
      await updateScaleSet(db, id, { spendResetAt: now() });
      logEvent({ event: "spend_guard_reset", scale_set: id });
      return c.json(await scaleSetObject(c.env, id).reconcileNow(id), 200);
    },
  );
