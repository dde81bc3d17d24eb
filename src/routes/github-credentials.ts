import { z } from "@hono/zod-openapi";
import { keyringFor } from "../crypto/keyring";
import { seal } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { type CredentialBudget, readCredentialBudgets } from "../db/budget/github-budget-store";
import { createDb } from "../db/client";
import {
  type CredentialsUse,
  credentialsNameTaken,
  credentialsUse,
  deleteCredentials,
  findCredentials,
  findCredentialsWithState,
  insertCredentials,
  listCredentials,
  newCredentialsChecks,
  updateCredentials,
} from "../db/github/github-credential-store";
import type { CredentialRow, CredentialStateRow } from "../db/github/github-state-store";
import type { Env } from "../env";
import { DEFAULT_ENDPOINT } from "../github/default-endpoint";
import { conflict, inUse, invalidBody } from "../http/errors";
import { Description, IdParam, iso, now, ResourceName, Timestamp, WebhookSecret } from "../http/openapi";
import { requireFound } from "../http/require-found";
import { resourceRoutes } from "../http/resource-routes";
import { createRouter } from "../http/router";
import { sentFields } from "../http/sent-fields";
import { scaleSetSettings } from "../scaleset/settings";

const PrivateKeyPem = z
  .string()
  .max(16 * 1024)
  .refine(
    (v) => /-----BEGIN (RSA )?PRIVATE KEY-----[\s\S]+-----END (RSA )?PRIVATE KEY-----/.test(v),
    "must be a PEM private key (PKCS#1 'RSA PRIVATE KEY' as GitHub issues it, or PKCS#8)",
  );

const PatBlock = z.strictObject({ oauth2_token: z.string().min(1).max(1024) });
const appWebhookSecret = {
  description:
    "The secret of the App's own webhook (one URL for every installation): its deliveries then reach the entities that use these credentials. See docs/github-app-webhooks.md",
};
const AppBlock = z.strictObject({
  app_id: z.int().positive(),
  installation_id: z.int().positive(),
  private_key: PrivateKeyPem,
  webhook_secret: WebhookSecret.optional().openapi(appWebhookSecret),
});
const AppUpdate = AppBlock.partial().extend({
  webhook_secret: WebhookSecret.nullable()
    .optional()
    .openapi({ description: `${appWebhookSecret.description}. null removes it` }),
});

const common = {
  name: ResourceName,
  description: Description.default(""),
  endpoint: ResourceName.default(DEFAULT_ENDPOINT),
};

const CreateCredentials = z
  .discriminatedUnion("auth_type", [
    z.strictObject({ ...common, auth_type: z.literal("pat"), pat: PatBlock }),
    z.strictObject({ ...common, auth_type: z.literal("app"), app: AppBlock }),
  ])
  .openapi("CreateGithubCredentials");

const UpdateCredentials = z
  .strictObject({
    name: ResourceName.optional(),
    description: Description.optional(),
    pat: PatBlock.optional(),
    app: AppUpdate.optional(),
  })
  .openapi("UpdateGithubCredentials");

const Health = z
  .object({
    status: z.enum(["ok", "failing"]).openapi({
      description: "failing: GitHub refused the credentials (401, or the App installation is gone); they are not used until changed",
    }),
    reason: z.string().nullable(),
    since: Timestamp.nullable(),
  })
  .openapi("GithubCredentialsHealth");

const RateLimit = z
  .object({
    limit: z.int().nullable(),
    remaining: z.int().nullable(),
    used: z.int().nullable(),
    resource: z.string().nullable(),
    reset_at: Timestamp.nullable(),
    observed_at: Timestamp.nullable().openapi({ description: "When GitHub last reported these figures" }),
    limited_until: Timestamp.nullable().openapi({
      description: "GitHub answered with a rate limit: no call is made with these credentials before this time",
    }),
  })
  .nullable()
  .openapi("GithubRateLimit", { description: "Last x-ratelimit-* figures GitHub sent; null before the first call" });

const Budget = z
  .object({
    configured_points_per_minute: z.int().openapi({ description: "GITHUB_POINTS_PER_MINUTE: what the budget spends at most" }),
    effective_points_per_minute: z.int().openapi({
      description: "What it spends now: less than configured while a cut learned from GitHub's secondary-limit refusals grows back",
    }),
    learned_at: Timestamp.nullable().openapi({ description: "When a refusal of GitHub's last cut the budget (null: never)" }),
  })
  .nullable()
  .openapi("GithubCredentialsBudget", {
    description: "The credentials' GitHub budget of JIT configs (docs/performance.md); null when GITHUB_POINTS_PER_MINUTE is 0",
  });

const CredentialsSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    endpoint: z.string(),
    auth_type: z.enum(["pat", "app"]),
    app_id: z.int().nullable(),
    installation_id: z.int().nullable(),
    has_secret: z.boolean().openapi({ description: "The token or private key is stored (never returned)" }),
    has_webhook_secret: z.boolean().openapi({ description: "An App webhook secret is stored (never returned); always false for a PAT" }),
    health: Health,
    rate_limit: RateLimit,
    budget: Budget,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("GithubCredentials");

/** Each credential's budget now (none when the Worker budgets nothing). */
async function budgets(env: Env, ids: string[]): Promise<Map<string, CredentialBudget> | null> {
  const policy = scaleSetSettings(env).githubBudget;
  return policy ? readCredentialBudgets(env.DB, ids, now(), policy) : null;
}

const budgetView = (b: CredentialBudget | undefined): z.infer<typeof Budget> =>
  b
    ? {
        configured_points_per_minute: b.configuredPointsPerMinute,
        effective_points_per_minute: b.effectivePointsPerMinute,
        learned_at: iso(b.learnedAt),
      }
    : null;

const view = (
  r: CredentialRow,
  state: CredentialStateRow | null,
  budget: CredentialBudget | undefined,
  at = now(),
): z.infer<typeof CredentialsSchema> => ({
  id: r.id,
  name: r.name,
  description: r.description,
  endpoint: r.endpointName,
  auth_type: r.authType,
  app_id: r.appId,
  installation_id: r.installationId,
  has_secret: r.secretEnc.length > 0,
  has_webhook_secret: r.webhookSecretEnc !== null,
  health: {
    status: state?.health ?? "ok",
    reason: state?.health === "failing" ? state.failureReason : null,
    since: state?.health === "failing" ? iso(state.failedAt) : null,
  },
  rate_limit:
    state && (state.rateLimitObservedAt !== null || state.blockedUntil !== null)
      ? {
          limit: state.rateLimitLimit,
          remaining: state.rateLimitRemaining,
          used: state.rateLimitUsed,
          resource: state.rateLimitResource,
          reset_at: iso(state.rateLimitResetAt),
          observed_at: iso(state.rateLimitObservedAt),
          limited_until: state.blockedUntil !== null && state.blockedUntil > at ? iso(state.blockedUntil) : null,
        }
      : null,
  budget: budgetView(budget),
  created_at: iso(r.createdAt)!,
  updated_at: iso(r.updatedAt)!,
});

/** Why credentials cannot be deleted yet, naming what needs them and what to do; null when nothing does. */
function inUseText(use: CredentialsUse): string | null {
  const named = (users: CredentialsUse["entities"]) => users.map((u) => `${u.kind} ${u.name}`).join(", ");
  const reasons = [
    use.entities.length &&
      `${named(use.entities)} act${use.entities.length === 1 ? "s" : ""} with them (give ${use.entities.length === 1 ? "it" : "them"} other credentials_name first)`,
    use.pools.length && `they are in the credential pool of ${named(use.pools)} (take them out of pool_credentials first)`,
    use.liveRunners &&
      `${use.liveRunners} runner(s) they minted are not deleted yet and are removed from GitHub with them (wait until those are gone)`,
  ].filter(Boolean);
  return reasons.length ? `credentials are in use: ${reasons.join("; ")}` : null;
}

const routes = resourceRoutes({
  collection: "/github/credentials",
  item: "/github/credentials/{id}",
  tags: ["GitHub credentials"],
  params: IdParam,
  view: CredentialsSchema,
});

export const githubCredentialRoutes = createRouter()
  .openapi(routes.list("List GitHub credentials", "Credentials"), async (c) => {
    const rows = await listCredentials(createDb(c.env));
    const budget = await budgets(
      c.env,
      rows.map((r) => r.credential.id),
    );
    return c.json(
      rows.map((r) => view(r.credential, r.state, budget?.get(r.credential.id))),
      200,
    );
  })
  .openapi(routes.create("Add a PAT or GitHub App credential", CreateCredentials), async (c) => {
    const body = c.req.valid("json");
    const db = createDb(c.env);
    const checks = await newCredentialsChecks(db, body.endpoint, body.name);
    if (!checks.endpointExists) {
      throw invalidBody([{ path: "endpoint", message: `unknown endpoint '${body.endpoint}'` }]);
    }
    if (body.auth_type === "app" && checks.forge !== "github") {
      // GitHub Apps exist only on GitHub; Gitea and Forgejo authenticate API calls with a token.
      throw invalidBody([
        {
          path: "auth_type",
          message: `endpoint '${body.endpoint}' is ${checks.forge}, which takes tokens only: create the credentials with auth_type pat and a ${checks.forge} access token (docs/forges.md)`,
        },
      ]);
    }
    if (checks.nameTaken) throw conflict("credentials with this name exist", { name: body.name });
    const id = crypto.randomUUID();
    const secret = body.auth_type === "pat" ? body.pat.oauth2_token : body.app.private_key;
    const t = now();
    const keyring = await keyringFor(c.env);
    const webhookSecret = body.auth_type === "app" ? body.app.webhook_secret : undefined;
    const row = await insertCredentials(db, {
      id,
      name: body.name,
      description: body.description,
      endpointName: body.endpoint,
      authType: body.auth_type,
      appId: body.auth_type === "app" ? body.app.app_id : null,
      installationId: body.auth_type === "app" ? body.app.installation_id : null,
      secretEnc: await seal(keyring, secret, secretContext.credential(id)),
      webhookSecretEnc: webhookSecret === undefined ? null : await seal(keyring, webhookSecret, secretContext.appWebhookSecret(id)),
      createdAt: t,
      updatedAt: t,
    });
    return c.json(view(row, null, (await budgets(c.env, [id]))?.get(id)), 201);
  })
  .openapi(routes.show("Show GitHub credentials", "Credentials"), async (c) => {
    const { id } = c.req.valid("param");
    const row = requireFound(await findCredentialsWithState(createDb(c.env), id), "credentials", id);
    return c.json(view(row.credential, row.state, (await budgets(c.env, [id]))?.get(id)), 200);
  })
  .openapi(
    routes.update("Update GitHub credentials (rename, new token, new key, App webhook secret)", UpdateCredentials, { renames: true }),
    async (c) => {
      const { id } = c.req.valid("param");
      const body = c.req.valid("json");
      const db = createDb(c.env);
      const row = requireFound(await findCredentials(db, id), "credentials", id);
      if (body.pat && row.authType !== "pat") {
        throw invalidBody([{ path: "pat", message: "these are GitHub App credentials" }]);
      }
      if (body.app && row.authType !== "app") {
        throw invalidBody([{ path: "app", message: "these are PAT credentials" }]);
      }
      if (body.name && body.name !== row.name) {
        if (await credentialsNameTaken(db, body.name)) throw conflict("credentials with this name exist", { name: body.name });
      }
      const newSecret = body.pat?.oauth2_token ?? body.app?.private_key;
      const webhookSecret = body.app?.webhook_secret;
      // A new token, key, App or installation is a different credential to GitHub: forget that
      // the old one was failing or rate limited, and its installation token.
      const changesIdentity =
        newSecret !== undefined ||
        (body.app?.app_id !== undefined && body.app.app_id !== row.appId) ||
        (body.app?.installation_id !== undefined && body.app.installation_id !== row.installationId);
      const updated = await updateCredentials(
        db,
        id,
        {
          ...sentFields(body, { name: "name", description: "description" }),
          ...(body.app?.app_id !== undefined && { appId: body.app.app_id }),
          ...(body.app?.installation_id !== undefined && { installationId: body.app.installation_id }),
          ...(newSecret !== undefined && {
            secretEnc: await seal(await keyringFor(c.env), newSecret, secretContext.credential(id)),
          }),
          // The App's webhook secret says nothing about who we are to GitHub's API: no state is forgotten.
          ...(webhookSecret !== undefined && {
            webhookSecretEnc:
              webhookSecret === null ? null : await seal(await keyringFor(c.env), webhookSecret, secretContext.appWebhookSecret(id)),
          }),
          updatedAt: now(),
        },
        changesIdentity,
      );
      return c.json(view(updated.credential, updated.state, (await budgets(c.env, [id]))?.get(id)), 200);
    },
  )
  .openapi(routes.remove("Delete GitHub credentials no entity uses, in no credential pool, with no live runner they minted"), async (c) => {
    const { id } = c.req.valid("param");
    const db = createDb(c.env);
    const use = requireFound(await credentialsUse(db, id), "credentials", id);
    const why = inUseText(use);
    if (why) throw inUse(why, { entities: use.entities, pools: use.pools, live_runners: use.liveRunners });
    await deleteCredentials(db, id);
    return c.body(null, 204);
  });
