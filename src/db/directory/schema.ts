import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, updatedAt } from "../columns";
import { githubCredentials, githubEndpoints } from "../github/schema";

export const entityKinds = ["repository", "organization", "enterprise"] as const;
export type EntityKind = (typeof entityKinds)[number];

export const entities = sqliteTable(
  "entities",
  {
    id: text("id").primaryKey(),
    kind: text("kind", { enum: entityKinds }).notNull(),
    /** Repository owner, organization name or enterprise slug. */
    owner: text("owner").notNull(),
    /** Repository name; empty for organizations and enterprises. */
    name: text("name").notNull().default(""),
    /**
     * Lower-cased `kind:owner[/name]`: how webhooks find their entity
     * (GitHub names are case-insensitive).
     */
    lookupKey: text("lookup_key").notNull(),
    endpointName: text("endpoint_name")
      .notNull()
      .references(() => githubEndpoints.name),
    credentialsId: text("credentials_id")
      .notNull()
      .references(() => githubCredentials.id),
    webhookSecretEnc: text("webhook_secret_enc").notNull(),
    /**
     * A job this entity's webhook reports may also run on its parents' scale sets (a
     * repository's organization, and `enterprise`). Off unless registered so: a payload never
     * decides which entities' scale sets it reaches.
     */
    useParentScaleSets: integer("use_parent_scale_sets", { mode: "boolean" }).notNull().default(false),
    /** The enterprise (slug) a repository or organization belongs to, as registered here. */
    enterprise: text("enterprise"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("entities_endpoint_lookup_idx").on(t.endpointName, t.lookupKey),
    index("entities_lookup_idx").on(t.lookupKey),
    index("entities_credentials_idx").on(t.credentialsId),
  ],
);

/**
 * An entity's credential pool: other credentials of its endpoint (more GitHub Apps installed on
 * the same account, or PATs) that mint its runners' JIT configs beside its own `credentials_id`,
 * each with its own budget, health and rate limits (docs/performance.md, "Credential pools").
 */
export const entityCredentials = sqliteTable(
  "entity_credentials",
  {
    entityId: text("entity_id")
      .notNull()
      .references(() => entities.id, { onDelete: "cascade" }),
    credentialId: text("credential_id")
      .notNull()
      .references(() => githubCredentials.id),
    addedAt: integer("added_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.entityId, t.credentialId] }), index("entity_credentials_credential_idx").on(t.credentialId)],
);
