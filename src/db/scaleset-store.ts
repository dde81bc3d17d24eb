import type { InstanceAddress, InstanceStatus, JobStatus, RunnerStatus } from "./schema";

/**
 * D1 access for the ScaleSet object. Every function is one round trip whatever the number of
 * instances: rows travel as one JSON parameter and SQLite's json_each spreads them out, which
 * also keeps each statement under D1's 100 bound parameters.
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
  updatedAt: number;
  entity: { id: string; kind: "repository" | "organization" | "enterprise"; owner: string; name: string; endpointName: string; credentialsId: string };
  provider: { id: string; name: string; url: string; secretEnc: string; timeoutSeconds: number };
  endpoint: { baseUrl: string; caCertBundle: string | null };
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
  /** The machine fetched a registration token (so it may have registered a runner itself). */
  registrationTokenServed: boolean;
  createAttempt: number;
  jobId: number | null;
  jobStatus: JobStatus | null;
  createdAt: number;
  statusChangedAt: number;
}

export interface ScaleSetSnapshotRows {
  scaleSet: ScaleSetRecord | null;
  instances: InstanceRecord[];
  queuedJobs: number;
  /** The oldest queued jobs (at most 50), for re-checking against GitHub. */
  oldestQueued: { id: number; repository: string; queuedAt: number }[];
}

export async function loadScaleSetSnapshot(db: D1Database, scaleSetId: string): Promise<ScaleSetSnapshotRows> {
  const [setRes, instRes, jobsRes, oldestRes] = await db.batch([
    db
      .prepare(
        `SELECT s.*, e.kind AS e_kind, e.owner AS e_owner, e.name AS e_name, e.endpoint_name AS e_endpoint, e.credentials_id AS e_credentials,
                p.name AS p_name, p.url AS p_url, p.secret_enc AS p_secret, p.timeout_seconds AS p_timeout, g.base_url AS g_base_url, g.ca_cert_bundle AS g_ca
           FROM scale_sets s JOIN entities e ON e.id = s.entity_id JOIN providers p ON p.id = s.provider_id
           JOIN github_endpoints g ON g.name = e.endpoint_name
          WHERE s.id = ?`,
      )
      .bind(scaleSetId),
    db
      .prepare(
        `SELECT i.id, i.name, i.provider_id, i.status, i.runner_status, i.runner_status_changed_at, i.agent_id, i.reported_agent_id,
                i.registration_token_served_at IS NOT NULL AS registration_token_served, i.create_attempt,
                i.job_id, j.status AS job_status, i.created_at, i.status_changed_at
           FROM instances i LEFT JOIN jobs j ON j.id = i.job_id
          WHERE i.scale_set_id = ? AND i.status != 'deleted'`,
      )
      .bind(scaleSetId),
    db.prepare(`SELECT count(*) AS n FROM jobs WHERE scale_set_id = ? AND status IN ('queued', 'waiting')`).bind(scaleSetId),
    db
      .prepare(
        `SELECT id, repository, coalesce(queued_at, created_at) AS queued_at FROM jobs
          WHERE scale_set_id = ? AND status IN ('queued', 'waiting') ORDER BY coalesce(queued_at, created_at) LIMIT 50`,
      )
      .bind(scaleSetId),
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
          updatedAt: s.updated_at,
          entity: { id: s.entity_id, kind: s.e_kind, owner: s.e_owner, name: s.e_name, endpointName: s.e_endpoint, credentialsId: s.e_credentials },
          provider: { id: s.provider_id, name: s.p_name, url: s.p_url, secretEnc: s.p_secret, timeoutSeconds: s.p_timeout },
          endpoint: { baseUrl: s.g_base_url, caCertBundle: s.g_ca },
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
      createAttempt: r.create_attempt,
      jobId: r.job_id,
      jobStatus: r.job_status,
      createdAt: r.created_at,
      statusChangedAt: r.status_changed_at,
    })),
    queuedJobs: (jobsRes!.results[0] as { n: number }).n,
    oldestQueued: (oldestRes!.results as { id: number; repository: string; queued_at: number }[]).map((r) => ({
      id: r.id,
      repository: r.repository,
      queuedAt: r.queued_at,
    })),
  };
}

export interface NewInstance {
  id: string;
  name: string;
  scaleSetId: string;
  osType: string;
  osArch: string;
  createdAt: number;
}

/** Fields a status change may also set; absent fields keep their value. */
export interface InstanceFields {
  providerId?: string;
  addresses?: InstanceAddress[];
  osType?: string;
  osName?: string;
  osVersion?: string;
  osArch?: string;
  statusMessage?: string;
  providerFault?: string | null;
  runnerStatus?: RunnerStatus;
  agentId?: number;
  reportedAgentId?: number;
  jitConfigEnc?: string;
  /** Record the runner status report even when the status stays the same (bootstrap progress). */
  recordRunnerReport?: boolean;
}

export interface StatusChange {
  id: string;
  from: InstanceStatus;
  to: InstanceStatus;
  reason: string;
  at: number;
  set?: InstanceFields;
}

const CHANGES_CTE = `
  changes AS (
    SELECT json_extract(value, '$.id') AS id, json_extract(value, '$.from') AS from_status,
           json_extract(value, '$.to') AS to_status, json_extract(value, '$.reason') AS reason,
           json_extract(value, '$.at') AS at, json_extract(value, '$.set') AS f
      FROM json_each(?1)
  )`;

// A present key sets the column (JSON null clears it); an absent key keeps it.
const field = (json: string, column: string) =>
  `${column} = CASE WHEN json_type(c.f, '$.${json}') IS NOT NULL THEN json_extract(c.f, '$.${json}') ELSE instances.${column} END`;

/**
 * Statements that insert new instance rows as pending_create, with their first transition.
 * Returned unexecuted so the caller can put them in the same batch as other writes.
 */
export function insertInstancesStatements(db: D1Database, rows: NewInstance[], reason: string): D1PreparedStatement[] {
  if (!rows.length) return [];
  const json = JSON.stringify(rows);
  return [
    db
      .prepare(
        `INSERT INTO instances (id, name, scale_set_id, status, runner_status, runner_status_changed_at, addresses, os_type, os_arch,
                                create_attempt, created_at, updated_at, status_changed_at)
         SELECT json_extract(value, '$.id'), json_extract(value, '$.name'), json_extract(value, '$.scaleSetId'), 'pending_create', 'pending',
                json_extract(value, '$.createdAt'), '[]', json_extract(value, '$.osType'), json_extract(value, '$.osArch'), 1,
                json_extract(value, '$.createdAt'), json_extract(value, '$.createdAt'), json_extract(value, '$.createdAt')
           FROM json_each(?1)`,
      )
      .bind(json),
    db
      .prepare(
        `INSERT INTO instance_transitions (instance_id, at, field, from_value, to_value, reason)
         SELECT json_extract(value, '$.id'), json_extract(value, '$.createdAt'), 'status', NULL, 'pending_create', ?2 FROM json_each(?1)`,
      )
      .bind(json, reason),
  ];
}

/**
 * Statements applying status changes, each only if the row still has the status the change
 * expects (so a concurrent writer wins cleanly), recording each applied transition.
 * The last statement RETURNS the ids that changed.
 */
export function statusChangeStatements(db: D1Database, changes: StatusChange[]): D1PreparedStatement[] {
  if (!changes.length) return [];
  const json = JSON.stringify(changes);
  return [
    db
      .prepare(
        `WITH ${CHANGES_CTE}
         INSERT INTO instance_transitions (instance_id, at, field, from_value, to_value, reason)
         SELECT c.id, c.at, 'status', c.from_status, c.to_status, c.reason
           FROM changes c JOIN instances i ON i.id = c.id AND i.status = c.from_status
          WHERE c.from_status != c.to_status
         UNION ALL
         SELECT c.id, c.at, 'runner_status', i.runner_status, json_extract(c.f, '$.runnerStatus'), c.reason
           FROM changes c JOIN instances i ON i.id = c.id AND i.status = c.from_status
          WHERE json_extract(c.f, '$.runnerStatus') IS NOT NULL
            AND (json_extract(c.f, '$.runnerStatus') != i.runner_status OR json_extract(c.f, '$.recordRunnerReport') = 1)`,
      )
      .bind(json),
    db
      .prepare(
        `WITH ${CHANGES_CTE}
         UPDATE instances SET
           status = c.to_status,
           status_changed_at = CASE WHEN c.to_status != instances.status THEN c.at ELSE instances.status_changed_at END,
           updated_at = c.at,
           runner_status_changed_at = CASE WHEN json_extract(c.f, '$.runnerStatus') IS NOT NULL
                                            AND json_extract(c.f, '$.runnerStatus') != instances.runner_status
                                           THEN c.at ELSE instances.runner_status_changed_at END,
           ${field("runnerStatus", "runner_status")},
           ${field("providerId", "provider_id")},
           addresses = CASE WHEN json_type(c.f, '$.addresses') = 'array' THEN json_extract(c.f, '$.addresses') ELSE instances.addresses END,
           ${field("osType", "os_type")},
           ${field("osName", "os_name")},
           ${field("osVersion", "os_version")},
           ${field("osArch", "os_arch")},
           ${field("statusMessage", "status_message")},
           ${field("providerFault", "provider_fault")},
           ${field("agentId", "agent_id")},
           ${field("reportedAgentId", "reported_agent_id")},
           ${field("jitConfigEnc", "jit_config_enc")}
         FROM changes c
         WHERE instances.id = c.id AND instances.status = c.from_status
         RETURNING instances.id`,
      )
      .bind(json),
  ];
}

/** Runs status changes as one batch and returns the ids that were applied. */
export async function applyStatusChanges(db: D1Database, changes: StatusChange[], extra: D1PreparedStatement[] = []): Promise<Set<string>> {
  const stmts = [...extra, ...statusChangeStatements(db, changes)];
  if (!stmts.length) return new Set();
  const results = await db.batch(stmts);
  if (!changes.length) return new Set();
  return new Set((results[results.length - 1]!.results as { id: string }[]).map((r) => r.id));
}

/**
 * Moves jobs forward to what GitHub says they are, never backward (a webhook may have done
 * it meanwhile): the statement only touches rows still queued or waiting.
 */
export async function applyJobCorrections(
  db: D1Database,
  corrections: { id: number; status: "in_progress" | "completed"; conclusion: string | null }[],
  now: number,
): Promise<void> {
  if (!corrections.length) return;
  await db
    .prepare(
      `UPDATE jobs SET
         status = json_extract(c.value, '$.status'),
         conclusion = coalesce(json_extract(c.value, '$.conclusion'), jobs.conclusion),
         started_at = coalesce(jobs.started_at, ?2),
         completed_at = CASE WHEN json_extract(c.value, '$.status') = 'completed' THEN coalesce(jobs.completed_at, ?2) ELSE jobs.completed_at END,
         updated_at = ?2
       FROM json_each(?1) AS c
       WHERE jobs.id = json_extract(c.value, '$.id') AND jobs.status IN ('queued', 'waiting')`,
    )
    .bind(JSON.stringify(corrections), now)
    .run();
}
