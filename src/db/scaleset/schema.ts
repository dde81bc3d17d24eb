import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { ShapeBounds } from "../../shapes/shape-bounds";
import { createdAt, updatedAt } from "../columns";
import { entities } from "../directory/schema";
import { providers } from "../providers/schema";

export const osTypes = ["linux", "windows"] as const;
/**
 * `poll`: the object polls its forge for waiting jobs (Forgejo, which sends no workflow_job webhooks).
 */
export const scaleSetIntakes = ["webhook", "scaleset_api", "poll"] as const;
export type ScaleSetIntake = (typeof scaleSetIntakes)[number];
/** When a JIT runner's config is generated at GitHub: when its machine first asks for it, or before the machine is created. */
export const jitConfigTimings = ["on_boot", "before_create"] as const;
export type JitConfigTiming = (typeof jitConfigTimings)[number];
export const osArches = ["amd64", "arm64", "i386", "arm"] as const;

/**
 * One entry of a scale set's min idle schedule: from each time `cron` matches in `timezone` (IANA),
 * `min_idle_runners` holds until another entry matches. `prewarm`: it starts ahead by the scale
 * set's boot time, so the runners are idle when the time comes.
 */
export interface MinIdleScheduleEntry {
  name: string;
  cron: string;
  timezone: string;
  min_idle_runners: number;
  prewarm: boolean;
}

export const scaleSets = sqliteTable(
  "scale_sets",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    entityId: text("entity_id")
      .notNull()
      .references(() => entities.id),
    providerId: text("provider_id")
      .notNull()
      .references(() => providers.id),
    /** JSON array of normalized labels (see intake/labels.ts). */
    labels: text("labels", { mode: "json" }).$type<string[]>().notNull(),
    minIdleRunners: integer("min_idle_runners").notNull().default(0),
    maxRunners: integer("max_runners").notNull(),
    image: text("image").notNull(),
    flavor: text("flavor").notNull(),
    osType: text("os_type", { enum: osTypes }).notNull().default("linux"),
    osArch: text("os_arch", { enum: osArches }).notNull().default("amd64"),
    /** Minutes an instance may take to become an idle runner. */
    bootstrapTimeout: integer("bootstrap_timeout").notNull().default(20),
    runnerPrefix: text("runner_prefix").notNull().default("edgerunner"),
    runnerGroup: text("runner_group").notNull().default(""),
    extraSpecs: text("extra_specs", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    priority: integer("priority").notNull().default(0),
    /**
     * Runners register with a just-in-time config (GitHub, GHES >= 3.10). Off: each machine
     * fetches a one-time registration token and runs config.sh itself.
     */
    jitConfigEnabled: integer("jit_config_enabled", { mode: "boolean" }).notNull().default(true),
    /**
     * Where its jobs come from: `webhook` (workflow_job deliveries matched by labels) or
     * `scaleset_api` (GitHub's runner scale set API: its object long-polls a message queue).
     */
    intake: text("intake", { enum: scaleSetIntakes }).notNull().default("webhook"),
    /**
     * With JIT: `on_boot` mints each runner's config when its machine first asks for it (the
     * metadata route, one Worker invocation per machine, paced by the GitHub budget);
     * `before_create` mints it in the scale set object before the shim create (scaleset_api
     * intake always does: its JIT comes from the scale set API's own endpoint).
     */
    jitConfigTiming: text("jit_config_timing", { enum: jitConfigTimings }).notNull().default("on_boot"),
    /**
     * How long its machines take from create to first asking for their runner, set by hand. Null:
     * learned from its machines (p90 of recent ones). On-boot creates are paced to mint within it.
     */
    bootTimeSeconds: integer("boot_time_seconds"),
    /** Min idle on a schedule (scaleset/schedule): the latest entry that matched wins, `min_idle_runners` otherwise. */
    schedules: text("schedules", { mode: "json" }).$type<MinIdleScheduleEntry[]>().notNull().default([]),
    /** Machines older than this are deleted unless their runner is on a job (0: never). */
    maxRunnerLifetimeSeconds: integer("max_runner_lifetime_seconds").notNull().default(86_400),
    /** A lifetime cap that applies even to a runner on its job (null: none). */
    runnerLifetimeHardCapSeconds: integer("runner_lifetime_hard_cap_seconds"),
    /** The spend guard: machine-hours a UTC day after which no more machines are created (null: no cap). */
    maxMachineHoursPerDay: real("max_machine_hours_per_day"),
    /** When an admin last lifted the spend guard (it stays lifted for the rest of that UTC day). */
    spendResetAt: integer("spend_reset_at"),
    /**
     * Gitea's act_runner or Forgejo's forgejo-runner binary for this scale set's machines (neither
     * forge publishes a runner-download API): null means the documented default release.
     */
    runnerDownloadUrl: text("runner_download_url"),
    /** Its SHA-256 (hex), checked by the install script before the binary runs. */
    runnerDownloadSha256: text("runner_download_sha256"),
    /**
     * A shaped scale set's bounds (src/shapes/shape-bounds.ts): each job says its machine's shape
     * in a `<key>=` label and gets a machine of its own. Null: every machine is `flavor` and `image`.
     */
    shape: text("shape", { mode: "json" }).$type<ShapeBounds>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("scale_sets_entity_name_idx").on(t.entityId, t.name), index("scale_sets_provider_idx").on(t.providerId)],
);
