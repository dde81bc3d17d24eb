import { z } from "@hono/zod-openapi";
import { PoolCredentialsInput, PoolMemberView, type PoolOwner, resolvePool } from "../api/credential-pool";
import { type EntityPath, entityPaths } from "../api/entity-paths";
import { toBase64Url } from "../crypto/base64url";
import { keyringFor } from "../crypto/keyring";
import { seal } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { createDb, type Db } from "../db/client";
import {
  deleteEntity,
  type EntityWithCredentials,
  entityIdByLookupKey,
  entityUse,
  findEntity,
  findEntityWithCredentials,
  insertEntity,
  listEntities,
  type PoolMember,
  updateEntity,
} from "../db/directory/entity-store";
import { findCredentialsByName, findCredentialsByNames } from "../db/github/github-credential-store";
import { findEndpoint } from "../db/github/github-endpoint-store";
import { forges } from "../db/github/schema";
import type { AppEnv } from "../env";
import { missingWebhookSecretIssue } from "../forges/entity-webhook-secret";
import { entityLookupKey } from "../github/entity-names";
import { conflict, inUse, invalidBody } from "../http/errors";
import { IdParam, iso, now, ResourceName, Timestamp, WebhookSecret } from "../http/openapi";
import { requireFound } from "../http/require-found";
import { resourceRoutes } from "../http/resource-routes";
import { createRouter } from "../http/router";
import { sentFields } from "../http/sent-fields";
import { routeWaiting } from "../intake/waiting-jobs";
import { giteaWebhookUrlFor, webhookUrlFor } from "../lib/webhook-url";

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

/** What a create or update says about parents; enterprises have none. */
interface ParentLinks {
  use_parent_scale_sets?: boolean;
  enterprise?: string | null;
}

interface KindSpec extends EntityPath {
  create: z.ZodType<
    { owner: string; name: string; credentials_name: string; webhook_secret?: string; pool_credentials?: string[] } & ParentLinks
  >;
  createDoc: z.ZodType;
  update: z.ZodType<{ credentials_name?: string; webhook_secret?: string; pool_credentials?: string[] } & ParentLinks>;
  view: z.ZodType;
}

const credentialsAndSecret = {
  credentials_name: ResourceName.openapi({ description: "Name of the GitHub credentials to act with" }),
  webhook_secret: WebhookSecret.optional().openapi({
    description:
      "The secret the forge signs this entity's workflow_job webhooks with. Required on GitHub and Gitea endpoints; " +
      "optional on a Forgejo endpoint, which sends no such webhooks (its scale sets poll)",
  }),
  pool_credentials: PoolCredentialsInput.optional(),
};

const commonView = {
  id: z.uuid(),
  endpoint: z.string(),
  credentials_id: z.uuid(),
  credentials_name: z.string(),
  pool_credentials: z.array(PoolMemberView).openapi({
    description:
      "Other credentials that mint its runners' JIT configs beside its own, oldest first (docs/performance.md, Credential pools)",
  }),
  has_webhook_secret: z.boolean(),
  forge: z.enum(forges).openapi({ description: "Its endpoint's forge (github, gitea, forgejo)" }),
  webhook_url: z.string().nullable().openapi({
    description:
      "Where its forge delivers workflow_job webhooks (GitHub's or Gitea's route, under PUBLIC_URL); null on Forgejo, whose scale sets poll",
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

/** See docs/security.md: which scale sets a delivery can reach. */
const parentLinks = {
  use_parent_scale_sets: z.boolean().openapi({
    description:
      "Jobs this entity's webhook reports may also run on its parents' scale sets: a repository's organization (its owner, if registered) " +
      "and the enterprise below (a repository without one uses its organization's). Off by default; a payload never decides this.",
  }),
  enterprise: GithubLogin.nullable().openapi({
    description: "Slug of the registered enterprise (same endpoint) this entity belongs to; only used with use_parent_scale_sets",
  }),
};
const parentLinkView = { use_parent_scale_sets: z.boolean(), enterprise: z.string().nullable() };

const CreateRepository = z
  .strictObject({
    owner: GithubLogin,
    name: RepoName,
    ...credentialsAndSecret,
    use_parent_scale_sets: parentLinks.use_parent_scale_sets.default(false),
    enterprise: parentLinks.enterprise.default(null),
  })
  .openapi("CreateRepository");
const CreateOrganization = z
  .strictObject({
    name: GithubLogin,
    ...credentialsAndSecret,
    use_parent_scale_sets: parentLinks.use_parent_scale_sets.default(false),
    enterprise: parentLinks.enterprise.default(null),
  })
  .openapi("CreateOrganization");
const CreateEnterprise = z
  .strictObject({ name: GithubLogin.openapi({ description: "Enterprise slug" }), ...credentialsAndSecret })
  .openapi("CreateEnterprise");

const updateFields = {
  credentials_name: ResourceName.optional().openapi({
    description: "Other GitHub credentials to act with; when they are in the pool, they leave it",
  }),
  webhook_secret: WebhookSecret.optional(),
  pool_credentials: PoolCredentialsInput.optional(),
};
const UpdateEntity = z.strictObject(updateFields).openapi("UpdateEntity");
const UpdateLinkedEntity = z
  .strictObject({
    ...updateFields,
    use_parent_scale_sets: parentLinks.use_parent_scale_sets.optional(),
    enterprise: parentLinks.enterprise.optional(),
  })
  .openapi("UpdateRepositoryOrOrganization");

const [repositories, organizations, enterprises] = entityPaths;
const specs: KindSpec[] = [
  {
    ...repositories,
    createDoc: CreateRepository,
    create: CreateRepository,
    update: UpdateLinkedEntity,
    view: z.object({ ...commonView, owner: z.string(), name: z.string(), ...parentLinkView }).openapi("Repository"),
  },
  {
    ...organizations,
    createDoc: CreateOrganization,
    create: CreateOrganization.transform((b) => ({ ...b, owner: b.name, name: "" })),
    update: UpdateLinkedEntity,
    view: z.object({ ...commonView, name: z.string(), ...parentLinkView }).openapi("Organization"),
  },
  {
    ...enterprises,
    createDoc: CreateEnterprise,
    create: CreateEnterprise.transform((b) => ({ ...b, owner: b.name, name: "" })),
    update: UpdateEntity,
    view: z.object({ ...commonView, name: z.string() }).openapi("Enterprise"),
  },
];

export function entityView(env: AppEnv["Bindings"], { entity: e, credentialsName, forge, pool }: EntityWithCredentials) {
  const base = {
    id: e.id,
    endpoint: e.endpointName,
    credentials_id: e.credentialsId,
    credentials_name: credentialsName,
    pool_credentials: pool.map(({ id, name }) => ({ id, name })),
    has_webhook_secret: e.webhookSecretEnc.length > 0,
    forge,
    webhook_url: forge === "forgejo" ? null : (forge === "gitea" ? giteaWebhookUrlFor : webhookUrlFor)(env.PUBLIC_URL ?? ""),
    created_at: iso(e.createdAt)!,
    updated_at: iso(e.updatedAt)!,
  };
  const links = { use_parent_scale_sets: e.useParentScaleSets, enterprise: e.enterprise };
  if (e.kind === "repository") return { ...base, owner: e.owner, name: e.name, ...links };
  return e.kind === "organization" ? { ...base, name: e.owner, ...links } : { ...base, name: e.owner };
}

/** An enterprise link must name an enterprise registered on the entity's endpoint. */
async function checkEnterpriseLink(db: Db, endpointName: string, enterprise: string | null | undefined): Promise<void> {
  if (enterprise === undefined || enterprise === null) return;
  if (!(await entityIdByLookupKey(db, endpointName, entityLookupKey("enterprise", enterprise)))) {
    throw invalidBody([{ path: "enterprise", message: `no enterprise '${enterprise}' is registered on endpoint '${endpointName}'` }]);
  }
}

async function credentialsByName(db: Db, name: string) {
  const creds = await findCredentialsByName(db, name);
  if (!creds) {
    throw invalidBody([{ path: "credentials_name", message: `unknown credentials '${name}'` }]);
  }
  return creds;
}

/** The pool a request names, checked against the entity it is for (400 naming each bad entry); undefined when it names none. */
async function requestedPool(db: Db, names: readonly string[] | undefined, owner: PoolOwner): Promise<PoolMember[] | undefined> {
  if (names === undefined) return undefined;
  const resolved = resolvePool(names, await findCredentialsByNames(db, names), owner);
  if (!resolved.ok) throw invalidBody(resolved.problems);
  return resolved.members;
}

function registerKind(router: ReturnType<typeof createRouter>, spec: KindSpec) {
  const routes = resourceRoutes({
    collection: `/${spec.path}`,
    item: `/${spec.path}/{id}`,
    tags: [spec.title],
    params: IdParam,
    view: spec.view,
  });
  const { kind } = spec;

  return router
    .openapi(routes.list(`List ${spec.path}`, spec.title), async (c) => {
      const rows = await listEntities(createDb(c.env), kind);
      return c.json(
        rows.map((r) => entityView(c.env, r)),
        200,
      );
    })
    .openapi(routes.create(`Add a ${kind}`, spec.createDoc), async (c) => {
      const parsed = spec.create.parse(c.req.valid("json"));
      const db = createDb(c.env);
      const creds = await credentialsByName(db, parsed.credentials_name);
      const lookupKey = entityLookupKey(kind, parsed.owner, parsed.name);
      const taken = await entityIdByLookupKey(db, creds.endpointName, lookupKey);
      if (taken) throw conflict(`this ${kind} is already registered`, { id: taken });
      await checkEnterpriseLink(db, creds.endpointName, parsed.enterprise);
      const forge = (await findEndpoint(db, creds.endpointName))?.forge ?? "github";
      const secretIssue = missingWebhookSecretIssue(forge, parsed.webhook_secret !== undefined);
      if (secretIssue) throw invalidBody([secretIssue]);
      // The column is NOT NULL and every reader expects a sealed secret: a Forgejo entity without
      // one gets a random secret nobody knows, which no delivery can match.
      const webhookSecret = parsed.webhook_secret ?? toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
      const pool =
        (await requestedPool(db, parsed.pool_credentials, { kind, endpointName: creds.endpointName, credentialsId: creds.id })) ?? [];
      const id = crypto.randomUUID();
      const t = now();
      const row = await insertEntity(
        db,
        {
          id,
          kind,
          owner: parsed.owner,
          name: parsed.name,
          lookupKey,
          endpointName: creds.endpointName,
          credentialsId: creds.id,
          webhookSecretEnc: await seal(await keyringFor(c.env), webhookSecret, secretContext.webhookSecret(id)),
          useParentScaleSets: parsed.use_parent_scale_sets ?? false,
          enterprise: parsed.enterprise ?? null,
          createdAt: t,
          updatedAt: t,
        },
        pool.map((m) => m.id),
      );
      // A new entity's pool is in the order given: the order its members were added in.
      return c.json(entityView(c.env, { entity: row, credentialsName: creds.name, forge, pool }), 201);
    })
    .openapi(routes.show(`Show a ${kind}`, spec.title), async (c) => {
      const { id } = c.req.valid("param");
      const row = requireFound(await findEntityWithCredentials(createDb(c.env), kind, id), kind, id);
      return c.json(entityView(c.env, row), 200);
    })
    .openapi(
      routes.update(
        kind === "enterprise"
          ? `Change an enterprise's credentials, credential pool or webhook secret`
          : `Change a ${kind}'s credentials, credential pool, webhook secret or parent links`,
        spec.update,
      ),
      async (c) => {
        const { id } = c.req.valid("param");
        const body = c.req.valid("json");
        const db = createDb(c.env);
        const entity = requireFound(await findEntity(db, kind, id), kind, id);
        let credentialsId = entity.credentialsId;
        if (body.credentials_name !== undefined) {
          const creds = await credentialsByName(db, body.credentials_name);
          if (creds.endpointName !== entity.endpointName) {
            throw invalidBody([
              {
                path: "credentials_name",
                message: `credentials are for endpoint '${creds.endpointName}', this ${kind} is on '${entity.endpointName}'`,
              },
            ]);
          }
          credentialsId = creds.id;
        }
        await checkEnterpriseLink(db, entity.endpointName, body.enterprise);
        // Checked against the credentials the entity will have: its new own ones cannot be in it.
        const pool = await requestedPool(db, body.pool_credentials, { kind, endpointName: entity.endpointName, credentialsId });
        await updateEntity(
          db,
          id,
          {
            credentialsId,
            ...(body.webhook_secret !== undefined && {
              webhookSecretEnc: await seal(await keyringFor(c.env), body.webhook_secret, secretContext.webhookSecret(id)),
            }),
            ...sentFields(body, { use_parent_scale_sets: "useParentScaleSets", enterprise: "enterprise" }),
            updatedAt: now(),
          },
          pool?.map((m) => m.id),
        );
        // Jobs it reported that wait unmatched may now be served by its parents' scale sets.
        if (body.use_parent_scale_sets !== undefined || body.enterprise !== undefined)
          await routeWaiting(c, id, null, "parent links changed");
        const row = await findEntityWithCredentials(db, kind, id);
        return c.json(entityView(c.env, row!), 200);
      },
    )
    .openapi(routes.remove(`Delete a ${kind} that has no scale sets`), async (c) => {
      const { id } = c.req.valid("param");
      const db = createDb(c.env);
      const use = requireFound(await entityUse(db, kind, id), kind, id);
      if (use.scaleSets.length) throw inUse(`${kind} still has scale sets`, { scale_sets: use.scaleSets });
      await deleteEntity(db, id);
      return c.body(null, 204);
    });
}

export const entityRoutes = specs.reduce((router, spec) => registerKind(router, spec), createRouter());
