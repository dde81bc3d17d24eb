import { bucketSql, HISTOGRAMS } from "../../observability/histograms";
import type { MachineShape } from "../../shapes/machine-shape";
import { ADD_OBSERVATION } from "../metrics/histogram-store";
import type { InstanceAddress, InstanceStatus, RunnerStatus } from "./schema";

/**
 * D1 writes of instances' lifecycle: new rows and the scale set object's status changes, in
 * one round trip whatever their number (rows travel as one JSON parameter that SQLite's
 * json_each spreads out, which also keeps each statement under D1's 100 bound parameters). The
 * lookups are instance-lookups.ts's.
 */

export interface NewInstance {
  id: string;
  name: string;
  scaleSetId: string;
  osType: string;
  osArch: string;
  createdAt: number;
  /** Its JIT config is minted when the machine first asks for it. */
  jitOnBoot?: boolean;
  /** A shaped scale set's machine: the shape and flavor it is made as. */
  shape?: MachineShape;
  /**
   * Inserted as `creating` (its create is sent in the same pass, nothing outbound before it):
   * with both transitions, and without the UPDATE that would move it a moment later in the same
   * batch, which wrote the row and its status index again.
   */
  creating?: boolean;
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
  /** The credential of the entity's pool that minted the runner's JIT config. */
  jitCredentialsId?: string;
  /** Forgejo: the handle of the waiting job the runner was made for, and that job (id and row). */
  forgeJobHandle?: string;
  jobId?: number;
  jobSeq?: number;
  /** Record the runner status report even when the status stays the same (bootstrap progress). */
  recordRunnerReport?: boolean;
  /**
   * When the runner came online (its first idle report): kept only if none is recorded yet, and
   * then counted in the runner startup histogram (created → online) in the same batch.
   */
  onlineAt?: number;
}

export interface StatusChange {
  id: string;
  from: InstanceStatus;
  to: InstanceStatus;
  reason: string;
  at: number;
  set?: InstanceFields;
}

/**
 * A change decided before its instance was read (a runner's status report, runner-report.ts):
 * it names the instance, and is applied only while the row still has these columns (and its
 * `from` status), every one its decision read; `agentId` left out: the decision read none.
 */
export interface ChangeGuard {
  name: string;
  scaleSetId: string;
  createAttempt: number;
  runnerStatus: RunnerStatus;
  agentId?: number | null;
}

export type GuardedChange = Omit<StatusChange, "id"> & { guard: ChangeGuard };

/** Why a new instance went to `creating`: its create is being sent. */
export const CALLING_PROVIDER = "calling provider";

// A guarded change has no id: its instance is the one of its name.
const CHANGES_CTE = `
  changes AS (
    SELECT key AS k, coalesce(json_extract(value, '$.id'), (SELECT id FROM instances WHERE name = json_extract(value, '$.guard.name'))) AS id,
           json_extract(value, '$.from') AS from_status,
           json_extract(value, '$.to') AS to_status, json_extract(value, '$.reason') AS reason,
           json_extract(value, '$.at') AS at, json_extract(value, '$.set') AS f,
           json_type(value, '$.guard') IS NOT NULL AS guarded, json_extract(value, '$.guard.scaleSetId') AS g_scale_set,
           json_extract(value, '$.guard.createAttempt') AS g_attempt, json_extract(value, '$.guard.runnerStatus') AS g_runner_status,
           json_type(value, '$.guard.agentId') IS NOT NULL AS g_has_agent, json_extract(value, '$.guard.agentId') AS g_agent
      FROM json_each(?1)
  )`;

/** Change `c` may be applied to instance row `i`: the status it expects, and its guard's columns when it has one. */
const applies = (i: string) =>
  `${i}.id = c.id AND ${i}.status = c.from_status
   AND (NOT c.guarded OR (${i}.scale_set_id = c.g_scale_set AND ${i}.create_attempt = c.g_attempt
        AND ${i}.runner_status = c.g_runner_status AND (NOT c.g_has_agent OR ${i}.agent_id IS c.g_agent)))`;

// A present key sets the column (JSON null clears it); an absent key keeps it.
const field = (json: string, column: string) =>
  `${column} = CASE WHEN json_type(c.f, '$.${json}') IS NOT NULL THEN json_extract(c.f, '$.${json}') ELSE instances.${column} END`;

/**
 * The statement that inserts new instance rows as pending_create (or `creating`, see NewInstance),
 * their first transitions in their history. Returned unexecuted so the caller can put it in the
 * same batch as other writes.
 */
export function insertInstancesStatements(db: D1Database, rows: NewInstance[], reason: string): D1PreparedStatement[] {
  if (!rows.length) return [];
  const created = entry("json_extract(value, '$.createdAt')", "'status'", "NULL", "'pending_create'", "?2");
  const creating = entry("json_extract(value, '$.createdAt')", "'status'", "'pending_create'", "'creating'", "?3");
  return [
    db
      .prepare(
        `INSERT INTO instances (id, name, scale_set_id, status, runner_status, runner_status_changed_at, addresses, os_type, os_arch,
                                jit_on_boot, shape, create_attempt, created_at, updated_at, status_changed_at, transitions)
         SELECT json_extract(value, '$.id'), json_extract(value, '$.name'), json_extract(value, '$.scaleSetId'),
                CASE WHEN json_extract(value, '$.creating') THEN 'creating' ELSE 'pending_create' END, 'pending',
                json_extract(value, '$.createdAt'), '[]', json_extract(value, '$.osType'), json_extract(value, '$.osArch'),
                coalesce(json_extract(value, '$.jitOnBoot'), 0), json_extract(value, '$.shape'), 1,
                json_extract(value, '$.createdAt'), json_extract(value, '$.createdAt'), json_extract(value, '$.createdAt'),
                CASE WHEN json_extract(value, '$.creating') THEN json_array(${created}, ${creating}) ELSE json_array(${created}) END
           FROM json_each(?1)`,
      )
      .bind(JSON.stringify(rows), reason, CALLING_PROVIDER),
  ];
}

/** How many transitions an instance's history keeps: a runner's life has about nine. */
export const HISTORY_LENGTH = 100;

/** One history entry (an InstanceTransition) from SQL expressions. */
const entry = (at: string, fieldName: string, from: string, to: string, reason: string) =>
  `json_object('at', ${at}, 'field', ${fieldName}, 'from', ${from}, 'to', ${to}, 'reason', ${reason})`;

const appendIf = (history: string, condition: string, item: string) =>
  `CASE WHEN ${condition} THEN json_insert(${history}, '$[#]', ${item}) ELSE ${history} END`;

const RUNNER_STATUS = "json_extract(c.f, '$.runnerStatus')";

/**
 * The history after change `c`: its status move, then its runner status (a report recorded even
 * unchanged when it asks). A change appends at most two, so the two oldest go first at the bound.
 * In an UPDATE's SET, `instances.*` are the row's values before it.
 */
const NEXT_HISTORY = appendIf(
  appendIf(
    `(CASE WHEN json_array_length(instances.transitions) > ${HISTORY_LENGTH - 2} THEN json_remove(instances.transitions, '$[0]', '$[0]') ELSE instances.transitions END)`,
    "c.from_status != c.to_status",
    entry("c.at", "'status'", "c.from_status", "c.to_status", "c.reason"),
  ),
  `${RUNNER_STATUS} IS NOT NULL AND (${RUNNER_STATUS} != instances.runner_status OR json_extract(c.f, '$.recordRunnerReport') = 1)`,
  entry("c.at", "'runner_status'", "instances.runner_status", RUNNER_STATUS, "c.reason"),
);

// Seconds from the instance's creation to the change's onlineAt: the startup observation.
const STARTUP_SECONDS = "(MAX(0, json_extract(c.f, '$.onlineAt') - i.created_at) / 1000.0)";

/**
 * The startup observation of each change that brings an instance online for the first time:
 * read before the UPDATE that sets `online_at`, under the same condition, so it counts once.
 */
const OBSERVE_STARTUP = `WITH ${CHANGES_CTE}
INSERT INTO metric_histograms (metric, scale_set_id, bucket, count, sum)
SELECT ?2, i.scale_set_id, ${bucketSql(STARTUP_SECONDS)}, 1, ${STARTUP_SECONDS}
  FROM changes c JOIN instances i ON ${applies("i")}
 WHERE i.online_at IS NULL AND json_extract(c.f, '$.onlineAt') IS NOT NULL
${ADD_OBSERVATION}`;

/**
 * Statements applying status changes, each only if the row still has the status the change
 * expects (so a concurrent writer wins cleanly) and, for a guarded change, its guard's columns,
 * appending each applied transition to the instance's history in the same UPDATE (and recording
 * the startup time of a runner that came online, when a change says so).
 * The last statement RETURNS the ids that changed.
 */
export function statusChangeStatements(db: D1Database, changes: (StatusChange | GuardedChange)[]): D1PreparedStatement[] {
  if (!changes.length) return [];
  const json = JSON.stringify(changes);
  const online = changes.some((c) => c.set?.onlineAt !== undefined);
  const moves = changes.some((c) => c.from !== c.to);
  const deletes = changes.some((c) => c.to === "deleted");
  const sets = (key: keyof InstanceFields) => changes.some((c) => c.set?.[key] !== undefined);
  return [
    ...(online ? [db.prepare(OBSERVE_STARTUP).bind(json, HISTOGRAMS.runnerStartup.name)] : []),
    db
      .prepare(
        `WITH ${CHANGES_CTE}
         UPDATE instances SET
           ${
             // Indexed columns are set only when a change in the batch may change them: SQLite
             // rewrites an index entry for every indexed column an UPDATE sets, changed or not, and
             // each is a billed row written (of a life's moves, only the one to `deleted` sets one).
             moves
               ? `status = c.to_status,
           status_changed_at = CASE WHEN c.to_status != instances.status THEN c.at ELSE instances.status_changed_at END,`
               : ""
           }
           ${deletes ? "deleted_at = CASE WHEN c.to_status = 'deleted' THEN c.at ELSE instances.deleted_at END," : ""}
           transitions = ${NEXT_HISTORY},
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
           ${field("jitConfigEnc", "jit_config_enc")},
           ${field("jitCredentialsId", "jit_credentials_id")},
           ${field("forgeJobHandle", "forge_job_handle")},
           ${sets("jobId") ? `${field("jobId", "job_id")},` : ""}
           ${sets("jobSeq") ? `${field("jobSeq", "job_seq")},` : ""}
           online_at = COALESCE(instances.online_at, json_extract(c.f, '$.onlineAt'))
         FROM changes c
         WHERE ${applies("instances")}
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
