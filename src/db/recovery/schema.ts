import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

// Delivery recovery's tables (src/recovery/, docs/github.md "Lost deliveries"); timestamps are unix
// milliseconds.

/** What a watch looks at: an entity's own hook, an App's webhook, or, where neither can be read, the backstop. */
export const watchKinds = ["repository", "organization", "app", "backstop"] as const;
export type WatchKind = (typeof watchKinds)[number];

/**
 * One hook (or backstop) the recovery object looks at, and how far it has looked. Written only
 * when something changes (a new failure listed, the hook found, a problem starting or ending), so
 * a pass that finds nothing new writes nothing here.
 */
export const deliveryWatches = sqliteTable(
  "delivery_watches",
  {
    /** `hook:<entity id>`, `app:<endpoint>:<app id>` or `backstop:<entity id>`. */
    key: text("key").primaryKey(),
    kind: text("kind", { enum: watchKinds }).notNull(),
    endpointName: text("endpoint_name").notNull(),
    /** The entity whose hook it is, or whose jobs the backstop looks for; null for an App's webhook. */
    entityId: text("entity_id"),
    appId: integer("app_id"),
    /** The hook GitHub lists with this coordinator's webhook URL, once found. */
    hookId: integer("hook_id"),
    /** When the hook was last looked for (list_hooks). */
    hookCheckedAt: integer("hook_checked_at"),
    /** The newest failed delivery examined (its delivered_at): the next walk stops a margin before it. */
    seenThrough: integer("seen_through"),
    /** A walk the page cap cut short: where it goes on (GitHub's cursor) and how far it must reach. */
    walkCursor: text("walk_cursor"),
    walkUntil: integer("walk_until"),
    /** `ok`, or why the last look failed (`forbidden`, `not_found`, `rate_limited`, `failing`, `unreachable`, `no_hook`). */
    status: text("status").notNull().default("ok"),
    /** What the forge or the check said, for the doctor and the dashboard (no secrets). */
    detail: text("detail"),
    /** Since when `status` holds. */
    statusSince: integer("status_since").notNull(),
    /** Backstop: where its round of repositories goes on (JSON). */
    backstopState: text("backstop_state", { mode: "json" }).$type<BackstopState>(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("delivery_watches_entity_idx").on(t.entityId)],
);

/** Where the backstop's round of repositories is: the next repository to look at, by name. */
export interface BackstopState {
  next: number;
}

/** What became of a failed delivery the recovery saw, or of a job the backstop found. */
export const recoveryOutcomes = [
  /** Fetched from GitHub and taken in. */
  "recovered",
  /** Still to fetch (a call failed, or the pass's cap was reached): the next pass tries again. */
  "pending",
  /** GitHub recorded it failed, but it reached us and is stored (an answer slower than GitHub waits, a duplicate). */
  "already_recorded",
  /** Taken in but changed nothing, or about nothing registered here. */
  "ignored",
  /** Intake refused it (a malformed payload, a job older than the retention window). */
  "refused",
  /** A later delivery about the same installation made it moot. */
  "superseded",
  /** Older than GitHub keeps deliveries or this coordinator keeps delivery ids. */
  "too_old",
] as const;
export type RecoveryOutcome = (typeof recoveryOutcomes)[number];

/**
 * Every failed delivery the recovery saw, by GUID (so each is handled once, and the dashboard
 * counts the last 24 hours), and every job the backstop found (`job:<endpoint>:<id>`). Pruned with
 * the delivery ids (DELIVERY_RETENTION_DAYS).
 */
export const deliveryRecoveries = sqliteTable(
  "delivery_recoveries",
  {
    key: text("key").primaryKey(),
    watchKey: text("watch_key").notNull(),
    entityId: text("entity_id"),
    /** `ingest`: the payload fetched from GitHub taken in; `backstop`: a job found without a delivery. */
    means: text("means", { enum: ["ingest", "backstop"] }).notNull(),
    /** GitHub's id of the delivery on its hook (what the payload is fetched by); null for the backstop. */
    githubId: integer("github_id"),
    event: text("event"),
    action: text("action"),
    deliveredAt: integer("delivered_at"),
    /** What GitHub got from us (0: no answer). */
    statusCode: integer("status_code"),
    seenAt: integer("seen_at").notNull(),
    outcome: text("outcome", { enum: recoveryOutcomes }).notNull(),
    /** Why, for refusals and for what is still pending. */
    detail: text("detail"),
    jobId: integer("job_id"),
    /** Fetch attempts that failed (a pending row gives up after a few). */
    attempts: integer("attempts").notNull().default(0),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("delivery_recoveries_seen_idx").on(t.seenAt),
    index("delivery_recoveries_entity_idx").on(t.entityId, t.seenAt),
    index("delivery_recoveries_pending_idx").on(t.outcome, t.watchKey),
  ],
);

/** The recovery object's last pass (one row, id 1): when it ran, for the dashboard and the setup check. */
export const recoveryLastPass = sqliteTable("recovery_last_pass", {
  id: integer("id").primaryKey(),
  at: integer("at").notNull(),
  durationMs: integer("duration_ms").notNull(),
  /** GitHub calls the pass made. */
  calls: integer("calls").notNull(),
  watches: integer("watches").notNull(),
  nextAt: integer("next_at"),
});
