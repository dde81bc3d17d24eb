import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { MachineShape } from "../../shapes/machine-shape";
import { createdAt, updatedAt } from "../columns";
import { scaleSets } from "../scaleset/schema";

export const instanceStatuses = [
  "pending_create",
  "creating",
  "running",
  "stopped",
  "error",
  "pending_delete",
  "pending_force_delete",
  "deleting",
  "deleted",
  "unknown",
] as const;
export type InstanceStatus = (typeof instanceStatuses)[number];

export const runnerStatuses = ["pending", "installing", "idle", "active", "failed", "terminated", "offline", "online", "unknown"] as const;
export type RunnerStatus = (typeof runnerStatuses)[number];

export interface InstanceAddress {
  address: string;
  type: "public" | "private";
}

/** One entry of an instance's history (`instances.transitions`). */
export interface InstanceTransition {
  at: number;
  field: "status" | "runner_status";
  from: string | null;
  to: string;
  reason: string;
}

export const instances = sqliteTable(
  "instances",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull().unique(),
    // Live instances block deleting their scale set (checked by the API); the history of
    // deleted ones goes with it.
    scaleSetId: text("scale_set_id")
      .notNull()
      .references(() => scaleSets.id, { onDelete: "cascade" }),
    /** The cloud's id for the machine, once the shim has reported one. */
    providerId: text("provider_id"),
    status: text("status", { enum: instanceStatuses }).notNull(),
    runnerStatus: text("runner_status", { enum: runnerStatuses }).notNull(),
    /** When the runner status last changed: how long an idle runner has idled. */
    runnerStatusChangedAt: integer("runner_status_changed_at"),
    /**
     * GitHub's runner id (GARM calls it agent id), only as GitHub gave it: the JIT config answer,
     * or GitHub's own runner found under this instance's name.
     */
    agentId: integer("agent_id"),
    /**
     * The runner id the machine reported (a registration-token runner's `agentId` from config.sh).
     * A claim: never used to remove a runner until GitHub confirms the runner has this name.
     */
    reportedAgentId: integer("reported_agent_id"),
    /** The runner's just-in-time configuration from GitHub, sealed. */
    jitConfigEnc: text("jit_config_enc"),
    /** The JIT config is minted when the machine first asks for it (scale set `jit_config_timing: on_boot`). */
    jitOnBoot: integer("jit_on_boot", { mode: "boolean" }).notNull().default(false),
    /** When a request claimed the one mint of this instance's JIT config (null: no mint under way or done). */
    jitClaimedAt: integer("jit_claimed_at"),
    /**
     * When the machine last asked for its on-boot JIT config, or when it was minted: the
     * bootstrap clock of a machine waiting in line for the GitHub budget starts here.
     */
    jitAskedAt: integer("jit_asked_at"),
    /** When the machine first asked for its runner: create to here is its boot time. */
    bootedAt: integer("booted_at"),
    /** When its runner first reported idle (create → online). */
    onlineAt: integer("online_at"),
    /** The credential (of its entity's pool) that minted its runner: the runner's cleanup goes through it. */
    jitCredentialsId: text("jit_credentials_id"),
    addresses: text("addresses", { mode: "json" }).$type<InstanceAddress[]>().notNull(),
    osType: text("os_type"),
    osName: text("os_name"),
    osVersion: text("os_version"),
    osArch: text("os_arch"),
    createAttempt: integer("create_attempt").notNull().default(1),
    /** When the create attempt's one registration token was claimed (runners without JIT). */
    registrationTokenServedAt: integer("registration_token_served_at"),
    /** That token, sealed, for the machine's retry while it bootstraps (runner/registration-token-store.ts). */
    registrationTokenEnc: text("registration_token_enc"),
    statusMessage: text("status_message"),
    providerFault: text("provider_fault"),
    /** The GitHub job this runner is serving (GitHub's id, as shown). */
    jobId: integer("job_id"),
    /** That job's row (jobs.seq): the one whose delivery could reach this instance's scale set. */
    jobSeq: integer("job_seq"),
    /** Forgejo: the handle of the waiting job this ephemeral runner was made for (`forgejo-runner one-job --handle`). */
    forgeJobHandle: text("forge_job_handle"),
    /** A shaped scale set's machine: the shape and flavor it was made as (src/shapes/machine-shape.ts). */
    shape: text("shape", { mode: "json" }).$type<MachineShape>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    statusChangedAt: integer("status_changed_at").notNull(),
    /** When it became `deleted` (null while it lives): only that move writes the scale set's index. */
    deletedAt: integer("deleted_at"),
    /**
     * Every change of its status and runner status with why, oldest first, the last 100: kept in
     * the row, appended by the UPDATE that makes the change, rather than a row written per change.
     */
    transitions: text("transitions", { mode: "json" }).$type<InstanceTransition[]>().notNull().default([]),
  },
  (t) => [
    // A scale set's live instances (deleted_at null: every snapshot) and those deleted since a time
    // (the spend guard's machine-hours today, retention, the dashboard), without reading the weeks
    // of deleted ones retention keeps. Only the move to `deleted` writes it: an index on status was
    // a row written by every status change (dropped, migrations 0029 and 0030).
    index("instances_scale_set_deleted_idx").on(t.scaleSetId, t.deletedAt),
    // No index on job_id or job_seq (dropped in migrations 0028 and 0031): each was a row written by
    // the insert and by the runner's link to its job, and retention, the one reader by job, reads
    // the live instances' jobs once instead.
  ],
);
