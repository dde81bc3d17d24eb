import { utcDayStart } from "../../scaleset/guards/spend-guard";
import { type MachineShape, readMachineShape } from "../../shapes/machine-shape";
import type { ShapeBounds } from "../../shapes/shape-bounds";
import type { QueuedShapedJob } from "../../shapes/shaped-jobs";
import type { Forge } from "../github/schema";
import { hasServingTwin } from "../jobs/job-twins";
import type { JobStatus } from "../jobs/schema";
import type { InstanceStatus, RunnerStatus } from "../runner/schema";
import { shapedQueueFrom, shapedQueueStatement } from "../shapes/shaped-job-store";
import type { JitConfigTiming, MinIdleScheduleEntry, ScaleSetIntake } from "./schema";

/**
 * D1 access for a scale set's object: the snapshot it plans from (one batch), and the entity its
 * GitHub adapter works for, each in one round trip.
 */

export interface ScaleSetRecord {
  id: string;
  name: string;
  enabled: boolean;
  labels: string[];
  minIdleRunners: number;
  maxRunners: number;
  image: string;
  flavor: string;
  osType: "linux" | "windows";
  osArch: string;
  bootstrapTimeout: number;
  runnerPrefix: string;
  runnerGroup: string;
  extraSpecs: Record<string, unknown>;
  jitConfigEnabled: boolean;
  intake: ScaleSetIntake;
  jitConfigTiming: JitConfigTiming;
  /** Boot time set by hand (seconds), or null: learned from its machines. */
  bootTimeSeconds: number | null;
  /** The lifetime watchdog (scaleset/guards/lifetime-watchdog.ts): 0 never; the hard cap null: none. */
  maxRunnerLifetimeSeconds: number;
  runnerLifetimeHardCapSeconds: number | null;
  /** The spend guard (scaleset/guards/spend-guard.ts): null no cap; when an admin last lifted it. */
  maxMachineHoursPerDay: number | null;
  spendResetAt: number | null;
  /** Min idle on a schedule (scaleset/schedule): the latest entry that matched wins. */
  schedules: MinIdleScheduleEntry[];
  updatedAt: number;
  entity: {
    id: string;
    kind: "repository" | "organization" | "enterprise";
    owner: string;
    name: string;
    endpointName: string;
    credentialsId: string;
    /** Its endpoint's forge; absent means github (rows built before forges existed, test fixtures). */
    forge?: Forge;
  };
  provider: { id: string; name: string; url: string; secretEnc: string; timeoutSeconds: number };
  /** `forge`: which forge the endpoint is (github, gitea, forgejo). */
  endpoint: { baseUrl: string; caCertBundle: string | null; forge: Forge };
  /** The runner binary Gitea/Forgejo machines download (null: the documented default release) and its SHA-256. */
  runnerDownloadUrl: string | null;
  runnerDownloadSha256: string | null;
  /** A shaped scale set's bounds (src/shapes); null: not shaped. */
  shape?: ShapeBounds | null;
}

export interface InstanceRecord {
  id: string;
  name: string;
  providerId: string | null;
  status: InstanceStatus;
  runnerStatus: RunnerStatus;
  runnerStatusChangedAt: number | null;
  /** GitHub's runner id (JIT answer or confirmed at GitHub). */
  agentId: number | null;
  /** The runner id the machine reported: a claim, unconfirmed. */
  reportedAgentId: number | null;
  /**
   * The machine was given what registers a runner before GitHub's id for it was recorded: a
   * registration token, or an on-boot JIT mint under way (so GitHub may have a runner by its name).
   */
  registrationTokenServed: boolean;
  /** When the machine last asked for its on-boot JIT config or had it minted (bootstrap clock). */
  jitAskedAt: number | null;
  /** Its runner's JIT config is minted on boot, and whether that happened yet. */
  jitOnBoot: boolean;
  jitMinted: boolean;
  /** When the machine first asked for its runner (create to here: its boot time). */
  bootedAt: number | null;
  /** The credential that minted its runner (null: the entity's own, or not minted by us on boot). */
  jitCredentialsId: string | null;
  createAttempt: number;
  jobId: number | null;
  jobStatus: JobStatus | null;
  /** Its job's row, repository and queue time (what GitHub is asked about when its `completed` may be lost). */
  jobSeq: number | null;
  jobRepository: string | null;
  jobQueuedAt: number | null;
  /** A shaped scale set's machine: what it was made as. */
  shape?: MachineShape | null;
  createdAt: number;
  statusChangedAt: number;
}

/** One credential of a scale set's pool (its entity's own first), as its JIT configs' pacing needs it. */
export interface PoolCredential {
  credentialId: string;
  health: "ok" | "failing";
  blockedUntil: number | null;
  learnedPointsPerMinute: number | null;
  learnedAt: number | null;
}

export interface ScaleSetSnapshotRows {
  scaleSet: ScaleSetRecord | null;
  /** The credentials that mint its runners: the entity's own first, then its pool's. */
  pool: PoolCredential[];
  instances: InstanceRecord[];
  queuedJobs: number;
  /** The oldest queued jobs (at most 50), for re-checking against GitHub. */
  oldestQueued: { seq: number; id: number; repository: string; queuedAt: number }[];
  /** Machine time of its instances within the UTC day of `now` up to `now` (ms): the spend guard's figure. */
  machineMsToday: number;
  /** When its last machine was deleted (null: it never had one): how long it has had none, for an idle tick. */
  lastDeletedAt: number | null;
  /** A shaped scale set's queued jobs not refused yet, oldest first (empty for any other). */
  shapedQueue: QueuedShapedJob[];
}

/**
 * Machine time of a scale set's instances in [dayStart, now]: each one's overlap of [created_at,
 * its deletion or now] with the day (scaleset/guards/spend-guard.ts machineMsInDay). Deleted instances
 * are kept for weeks (retention): both halves go through instances_scale_set_deleted_idx, the live
 * ones (no deletion time) and those deleted today, never by a scan of the scale set's history.
 */
const MACHINE_MS_TODAY = `SELECT
   (SELECT coalesce(sum(max(0, ?3 - max(created_at, ?2))), 0) FROM instances
     WHERE scale_set_id = ?1 AND deleted_at IS NULL)
 + (SELECT coalesce(sum(max(0, min(deleted_at, ?3) - max(created_at, ?2))), 0) FROM instances
     WHERE scale_set_id = ?1 AND deleted_at > ?2) AS ms,
   (SELECT max(deleted_at) FROM instances WHERE scale_set_id = ?1) AS last_deleted_at`;

/** `now`: the time the spend guard's machine time is counted up to (within its UTC day). */
export async function loadScaleSetSnapshot(db: D1Database, scaleSetId: string, now = Date.now()): Promise<ScaleSetSnapshotRows> {
  const dayStart = utcDayStart(now);
  const [setRes, instRes, jobsRes, oldestRes, poolRes, spendRes, shapedRes] = await db.batch([
    db
      .prepare(
        `SELECT s.*, e.kind AS e_kind, e.owner AS e_owner, e.name AS e_name, e.endpoint_name AS e_endpoint, e.credentials_id AS e_credentials,
                p.name AS p_name, p.url AS p_url, p.secret_enc AS p_secret, p.timeout_seconds AS p_timeout, g.base_url AS g_base_url, g.ca_cert_bundle AS g_ca,
                g.forge AS g_forge
           FROM scale_sets s JOIN entities e ON e.id = s.entity_id JOIN providers p ON p.id = s.provider_id
           JOIN github_endpoints g ON g.name = e.endpoint_name
          WHERE s.id = ?`,
      )
      .bind(scaleSetId),
    db
      .prepare(
        `SELECT i.id, i.name, i.provider_id, i.status, i.runner_status, i.runner_status_changed_at, i.agent_id, i.reported_agent_id,
                (i.registration_token_served_at IS NOT NULL OR (i.jit_claimed_at IS NOT NULL AND i.agent_id IS NULL)) AS registration_token_served,
                i.jit_asked_at, i.create_attempt, i.jit_on_boot, i.jit_config_enc IS NOT NULL AS jit_minted, i.booted_at, i.jit_credentials_id,
                i.job_id, j.status AS job_status, i.job_seq, j.repository AS job_repository,
                coalesce(j.queued_at, j.created_at) AS job_queued_at, i.shape, i.created_at, i.status_changed_at
           FROM instances i LEFT JOIN jobs j ON j.seq = i.job_seq
          WHERE i.scale_set_id = ? AND i.deleted_at IS NULL`,
      )
      .bind(scaleSetId),
    // A job another row of serves (its organization's hook reported it too: job-twins.ts) asks for no runner here.
    db
      .prepare(
        `SELECT count(*) AS n FROM jobs j
          WHERE j.scale_set_id = ? AND j.status IN ('queued', 'waiting') AND j.refusal IS NULL AND NOT ${hasServingTwin()}`,
      )
      .bind(scaleSetId),
    db
      .prepare(
        `SELECT j.seq, j.id, j.repository, coalesce(j.queued_at, j.created_at) AS queued_at FROM jobs j
          WHERE j.scale_set_id = ? AND j.status IN ('queued', 'waiting') AND NOT ${hasServingTwin()}
          ORDER BY coalesce(j.queued_at, j.created_at) LIMIT 50`,
      )
      .bind(scaleSetId),
    db
      .prepare(
        `SELECT c.id, st.health, st.blocked_until, b.learned_points_per_minute, b.learned_at
           FROM (SELECT e.credentials_id AS id, 0 AS pos, 0 AS added_at FROM scale_sets s JOIN entities e ON e.id = s.entity_id WHERE s.id = ?1
                 UNION
                 SELECT ec.credential_id, 1, ec.added_at FROM scale_sets s JOIN entity_credentials ec ON ec.entity_id = s.entity_id
                  JOIN entities e ON e.id = s.entity_id WHERE s.id = ?1 AND ec.credential_id <> e.credentials_id) c
           LEFT JOIN github_credential_state st ON st.credential_id = c.id
           LEFT JOIN github_budget b ON b.credential_id = c.id
          ORDER BY c.pos, c.added_at, c.id`,
      )
      .bind(scaleSetId),
    db.prepare(MACHINE_MS_TODAY).bind(scaleSetId, dayStart, now),
    shapedQueueStatement(db, scaleSetId),
  ]);
  const s = setRes!.results[0] as Record<string, any> | undefined;
  return {
    scaleSet: s
      ? {
          id: s.id,
          name: s.name,
          enabled: Boolean(s.enabled),
          labels: JSON.parse(s.labels),
          minIdleRunners: s.min_idle_runners,
          maxRunners: s.max_runners,
          image: s.image,
          flavor: s.flavor,
          osType: s.os_type,
          osArch: s.os_arch,
          bootstrapTimeout: s.bootstrap_timeout,
          runnerPrefix: s.runner_prefix,
          runnerGroup: s.runner_group,
          extraSpecs: JSON.parse(s.extra_specs),
          jitConfigEnabled: Boolean(s.jit_config_enabled),
          intake: s.intake,
          jitConfigTiming: s.jit_config_timing,
          bootTimeSeconds: s.boot_time_seconds ?? null,
          maxRunnerLifetimeSeconds: s.max_runner_lifetime_seconds,
          runnerLifetimeHardCapSeconds: s.runner_lifetime_hard_cap_seconds ?? null,
          maxMachineHoursPerDay: s.max_machine_hours_per_day ?? null,
          spendResetAt: s.spend_reset_at ?? null,
          schedules: JSON.parse(s.schedules ?? "[]"),
          updatedAt: s.updated_at,
          entity: {
            id: s.entity_id,
            kind: s.e_kind,
            owner: s.e_owner,
            name: s.e_name,
            endpointName: s.e_endpoint,
            credentialsId: s.e_credentials,
            forge: s.g_forge,
          },
          provider: { id: s.provider_id, name: s.p_name, url: s.p_url, secretEnc: s.p_secret, timeoutSeconds: s.p_timeout },
          endpoint: { baseUrl: s.g_base_url, caCertBundle: s.g_ca, forge: s.g_forge ?? "github" },
          runnerDownloadUrl: s.runner_download_url ?? null,
          runnerDownloadSha256: s.runner_download_sha256 ?? null,
          shape: s.shape ? JSON.parse(s.shape) : null,
        }
      : null,
    instances: (instRes!.results as Record<string, any>[]).map((r) => ({
      id: r.id,
      name: r.name,
      providerId: r.provider_id,
      status: r.status,
      runnerStatus: r.runner_status,
      runnerStatusChangedAt: r.runner_status_changed_at,
      agentId: r.agent_id,
      reportedAgentId: r.reported_agent_id,
      registrationTokenServed: Boolean(r.registration_token_served),
      jitAskedAt: r.jit_asked_at,
      jitOnBoot: Boolean(r.jit_on_boot),
      jitMinted: Boolean(r.jit_minted),
      bootedAt: r.booted_at ?? null,
      jitCredentialsId: r.jit_credentials_id ?? null,
      createAttempt: r.create_attempt,
      jobId: r.job_id,
      jobStatus: r.job_status,
      jobSeq: r.job_seq ?? null,
      jobRepository: r.job_repository ?? null,
      jobQueuedAt: r.job_queued_at ?? null,
      shape: readMachineShape(r.shape),
      createdAt: r.created_at,
      statusChangedAt: r.status_changed_at,
    })),
    pool: (poolRes!.results as Record<string, any>[]).map((r) => ({
      credentialId: r.id,
      health: r.health === "failing" ? "failing" : "ok",
      blockedUntil: r.blocked_until ?? null,
      learnedPointsPerMinute: r.learned_points_per_minute ?? null,
      learnedAt: r.learned_at ?? null,
    })),
    queuedJobs: (jobsRes!.results[0] as { n: number }).n,
    oldestQueued: (oldestRes!.results as { seq: number; id: number; repository: string; queued_at: number }[]).map((r) => ({
      seq: r.seq,
      id: r.id,
      repository: r.repository,
      queuedAt: r.queued_at,
    })),
    machineMsToday: Number((spendRes!.results[0] as { ms: number } | undefined)?.ms ?? 0),
    lastDeletedAt: (spendRes!.results[0] as { last_deleted_at: number | null } | undefined)?.last_deleted_at ?? null,
    shapedQueue: shapedQueueFrom(shapedRes!.results as Record<string, unknown>[]),
  };
}

/** The GitHub entity a scale set serves, or null if the scale set is gone. */
export async function scaleSetEntity(db: D1Database, scaleSetId: string): Promise<ScaleSetRecord["entity"] | null> {
  const e = await db
    .prepare(
      `SELECT e.id, e.kind, e.owner, e.name, e.endpoint_name, e.credentials_id, g.forge
         FROM scale_sets s JOIN entities e ON e.id = s.entity_id JOIN github_endpoints g ON g.name = e.endpoint_name WHERE s.id = ?`,
    )
    .bind(scaleSetId)
    .first<Record<string, any>>();
  if (!e) return null;
  return {
    id: e.id,
    kind: e.kind,
    owner: e.owner,
    name: e.name,
    endpointName: e.endpoint_name,
    credentialsId: e.credentials_id,
    forge: e.forge,
  };
}
