import { createRoute, z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import type { AppEnv } from "../env";
import { createDb, type Db } from "../db/client";
import { entities, githubCredentials, scaleSets, type EntityKind } from "../db/schema";
import { keyringFor } from "../crypto/keyring";
import { seal } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { conflict, inUse, invalidBody, notFound } from "../http/errors";
import { createRouter } from "../http/router";
import {
  conflictResponse,
  errorResponses,
  IdParam,
  iso,
  jsonBody,
  jsonResponse,
  noContent,
  notFoundResponse,
  now,
  ResourceName,
  Timestamp,
} from "./common";

const GithubLogin = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "not a valid GitHub account name");
const RepoName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_.-]+$/, "not a valid repository name")
  .refine((v) => v !== "." && v !== "..", "not a valid repository name");
const WebhookSecret = z.string().min(8, "use at least 8 characters").max(512);

export type EntityRow = typeof entities.$inferSelect;

/** How an entity is named on GitHub: `owner/repo`, `org`, or the enterprise slug. */
export const entityFullName = (e: Pick<EntityRow, "kind" | "owner" | "name">) =>
  e.kind === "repository" ? `${e.owner}/${e.name}` : e.owner;

/** The key a webhook payload is matched on; GitHub names are case-insensitive. */
export const entityLookupKey = (kind: EntityKind, owner: string, name = "") =>
  `${kind}:${kind === "repository" ? `${owner}/${name}` : owner}`.toLowerCase();

interface KindSpec {
  kind: EntityKind;
  path: string;
  title: string;
  create: z.ZodType<{ owner: string; name: string; credentials_name: string; webhook_secret: string }>;
  createDoc: z.ZodType;
  view: z.ZodType;
}

const credentialsAndSecret = {
  credentials_name: ResourceName.openapi({ description: "Name of the GitHub credentials to act with" }),
  webhook_secret: WebhookSecret.openapi({ description: "The secret GitHub signs this entity's webhooks with" }),
};

const commonView = {
  id: z.uuid(),
  endpoint: z.string(),
  credentials_id: z.uuid(),
  credentials_name: z.string(),
  has_webhook_secret: z.boolean(),
  webhook_url: z.string().openapi({ description: "Paste this into the GitHub webhook settings" }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

const CreateRepository = z
  .strictObject({ owner: GithubLogin, name: RepoName, ...credentialsAndSecret })
  .openapi("CreateRepository");
const CreateOrganization = z.strictObject({ name: GithubLogin, ...credentialsAndSecret }).openapi("CreateOrganization");
const CreateEnterprise = z
  .strictObject({ name: GithubLogin.openapi({ description: "Enterprise slug" }), ...credentialsAndSecret })
  .openapi("CreateEnterprise");

const specs: KindSpec[] = [
  {
    kind: "repository",
    path: "repositories",
    title: "Repositories",
    createDoc: CreateRepository,
    create: CreateRepository,
    view: z.object({ ...commonView, owner: z.string(), name: z.string() }).openapi("Repository"),
  },
  {
    kind: "organization",
    path: "organizations",
    title: "Organizations",
    createDoc: CreateOrganization,
    create: CreateOrganization.transform((b) => ({ ...b, owner: b.name, name: "" })),
    view: z.object({ ...commonView, name: z.string() }).openapi("Organization"),
  },
  {
    kind: "enterprise",
    path: "enterprises",
    title: "Enterprises",
    createDoc: CreateEnterprise,
    create: CreateEnterprise.transform((b) => ({ ...b, owner: b.name, name: "" })),
    view: z.object({ ...commonView, name: z.string() }).openapi("Enterprise"),
  },
];

const UpdateEntity = z
  .strictObject({
    credentials_name: ResourceName.optional(),
    webhook_secret: WebhookSecret.optional(),
  })
  .openapi("UpdateEntity");

type EntityWithCreds = { entity: EntityRow; credentialsName: string };

export function entityView(env: AppEnv["Bindings"], { entity: e, credentialsName }: EntityWithCreds) {
  const base = {
    id: e.id,
    endpoint: e.endpointName,
    credentials_id: e.credentialsId,
    credentials_name: credentialsName,
    has_webhook_secret: e.webhookSecretEnc.length > 0,
    webhook_url: `${(env.PUBLIC_URL ?? "").replace(/\/+$/, "")}/webhooks/github`,
    created_at: iso(e.createdAt)!,
    updated_at: iso(e.updatedAt)!,
  };
  return e.kind === "repository" ? { ...base, owner: e.owner, name: e.name } : { ...base, name: e.owner };
}

const selectWithCreds = (db: Db) =>
  db
    .select({ entity: entities, credentialsName: githubCredentials.name })
    .from(entities)
    .innerJoin(githubCredentials, eq(githubCredentials.id, entities.credentialsId));

/** Loads an entity of the given kind or fails with 404. */
export async function requireEntity(db: Db, kind: EntityKind, id: string): Promise<EntityRow> {
  const [row] = await db.select().from(entities).where(and(eq(entities.id, id), eq(entities.kind, kind)));
  if (!row) throw notFound(kind, id);
  return row;
}

async function credentialsByName(db: Db, name: string) {
  const [creds] = await db.select().from(githubCredentials).where(eq(githubCredentials.name, name));
  if (!creds) {
    throw invalidBody([{ path: "credentials_name", message: `unknown credentials '${name}'` }]);
  }
  return creds;
}

function registerKind(router: ReturnType<typeof createRouter>, spec: KindSpec) {
  const tags = [spec.title];
  const { kind } = spec;

  return router
    .openapi(
      createRoute({
        method: "get",
        path: `/${spec.path}`,
        tags,
        summary: `List ${spec.path}`,
        responses: { 200: jsonResponse(z.array(spec.view), spec.title), ...errorResponses },
      }),
      async (c) => {
        const rows = await selectWithCreds(createDb(c.env)).where(eq(entities.kind, kind)).orderBy(entities.lookupKey);
        return c.json(
          rows.map((r) => entityView(c.env, r)),
          200,
        );
      },
    )
    .openapi(
      createRoute({
        method: "post",
        path: `/${spec.path}`,
        tags,
        summary: `Add a ${kind}`,
        request: { body: jsonBody(spec.createDoc) },
        responses: { 201: jsonResponse(spec.view, "Created"), ...errorResponses, ...conflictResponse },
      }),
      async (c) => {
        const parsed = spec.create.parse(c.req.valid("json"));
        const db = createDb(c.env);
        const creds = await credentialsByName(db, parsed.credentials_name);
        const lookupKey = entityLookupKey(kind, parsed.owner, parsed.name);
        const taken = await db
          .select({ id: entities.id })
          .from(entities)
          .where(and(eq(entities.endpointName, creds.endpointName), eq(entities.lookupKey, lookupKey)));
        if (taken.length) throw conflict(`this ${kind} is already registered`, { id: taken[0]!.id });
        const id = crypto.randomUUID();
        const t = now();
        const [row] = await db
          .insert(entities)
          .values({
            id,
            kind,
            owner: parsed.owner,
            name: parsed.name,
            lookupKey,
            endpointName: creds.endpointName,
            credentialsId: creds.id,
            webhookSecretEnc: await seal(await keyringFor(c.env), parsed.webhook_secret, secretContext.webhookSecret(id)),
            createdAt: t,
            updatedAt: t,
          })
          .returning();
        return c.json(entityView(c.env, { entity: row!, credentialsName: creds.name }), 201);
      },
    )
    .openapi(
      createRoute({
        method: "get",
        path: `/${spec.path}/{id}`,
        tags,
        summary: `Show a ${kind}`,
        request: { params: IdParam },
        responses: { 200: jsonResponse(spec.view, spec.title), ...errorResponses, ...notFoundResponse },
      }),
      async (c) => {
        const { id } = c.req.valid("param");
        const [row] = await selectWithCreds(createDb(c.env)).where(and(eq(entities.id, id), eq(entities.kind, kind)));
        if (!row) throw notFound(kind, id);
        return c.json(entityView(c.env, row), 200);
      },
    )
    .openapi(
      createRoute({
        method: "put",
        path: `/${spec.path}/{id}`,
        tags,
        summary: `Change a ${kind}'s credentials or webhook secret`,
        request: { params: IdParam, body: jsonBody(UpdateEntity) },
        responses: { 200: jsonResponse(spec.view, "Updated"), ...errorResponses, ...notFoundResponse },
      }),
      async (c) => {
        const { id } = c.req.valid("param");
        const body = c.req.valid("json");
        const db = createDb(c.env);
        const entity = await requireEntity(db, kind, id);
        let credentialsId = entity.credentialsId;
        if (body.credentials_name !== undefined) {
          const creds = await credentialsByName(db, body.credentials_name);
          if (creds.endpointName !== entity.endpointName) {
            throw invalidBody([
              { path: "credentials_name", message: `credentials are for endpoint '${creds.endpointName}', this ${kind} is on '${entity.endpointName}'` },
            ]);
          }
          credentialsId = creds.id;
        }
        await db
          .update(entities)
          .set({
            credentialsId,
            ...(body.webhook_secret !== undefined && {
              webhookSecretEnc: await seal(await keyringFor(c.env), body.webhook_secret, secretContext.webhookSecret(id)),
            }),
            updatedAt: now(),
          })
          .where(eq(entities.id, id));
        const [row] = await selectWithCreds(db).where(eq(entities.id, id));
        return c.json(entityView(c.env, row!), 200);
      },
    )
    .openapi(
      createRoute({
        method: "delete",
        path: `/${spec.path}/{id}`,
        tags,
        summary: `Delete a ${kind} that has no scale sets`,
        request: { params: IdParam },
        responses: { ...noContent, ...errorResponses, ...notFoundResponse, ...conflictResponse },
      }),
      async (c) => {
        const { id } = c.req.valid("param");
        const db = createDb(c.env);
        const [found, sets] = await db.batch([
          db.select({ id: entities.id }).from(entities).where(and(eq(entities.id, id), eq(entities.kind, kind))),
          db.select({ id: scaleSets.id, name: scaleSets.name }).from(scaleSets).where(eq(scaleSets.entityId, id)).limit(20),
        ]);
        if (!found.length) throw notFound(kind, id);
        if (sets.length) throw inUse(`${kind} still has scale sets`, { scale_sets: sets });
        await db.delete(entities).where(eq(entities.id, id));
        return c.body(null, 204);
      },
    );
}

export const entityRoutes = specs.reduce((router, spec) => registerKind(router, spec), createRouter());

export const entityKindByPath: Record<string, EntityKind> = Object.fromEntries(specs.map((s) => [s.path, s.kind]));
