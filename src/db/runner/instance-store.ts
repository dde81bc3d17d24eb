import { and, eq, getTableColumns, type SQL } from "drizzle-orm";
import { bucketSql, HISTOGRAMS } from "../../observability/histograms";
import type { MachineShape } from "../../shapes/machine-shape";
import type { Db } from "../client";
import { ADD_OBSERVATION } from "../metrics/histogram-store";
import { type RunnerSetup, runnerSetupFromRow, runnerSetupStatement } from "../scaleset/runner-setup-store";
import { scaleSets } from "../scaleset/schema";
import { type InstanceAddress, type InstanceStatus, type InstanceTransition, instances, type RunnerStatus } from "./schema";

/**
 * D1 access for instances: their lifecycle writes (the scale set object's status changes, in
 * one round trip whatever their number: rows travel as one JSON parameter that SQLite's
 * json_each spreads out, which also keeps each statement under D1's 100 bound parameters), the
 * lookups of one instance by name, what a booting machine records about itself, and the admin
 * API's listings.
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

/** One instance as its callers need it: status, runner status, create attempt and runner ids. */
export interface InstanceSummary {
  id: string;
  name: string;
  scaleSetId: string;
  status: InstanceStatus;
  runnerStatus: RunnerStatus;
  createAttempt: number;
  agentId: number | null;
  /** A sealed JIT config is stored (minted before the create, or on boot). */
  hasJitConfig: boolean;
  /** Its JIT config is minted when the machine first asks (no JIT config until then). */
  jitOnBoot: boolean;
  osType: string | null;
  osArch: string | null;
}

/** An instance with its sealed JIT config (null: none yet, or it registers with a token). */
export type InstanceWithJitConfig = InstanceSummary & { jitConfigEnc: string | null };

// The sealed JIT config (~3 KB) is read only by the one route that opens it: every other
// lookup (a booting machine's ~8 authenticated requests, each status report in the object)
// would carry it through D1's client for nothing.
const SUMMARY_COLUMNS =
  "id, name, scale_set_id, status, runner_status, create_attempt, agent_id, jit_config_enc IS NOT NULL AS has_jit_config, jit_on_boot, os_type, os_arch";

/** The instance with this name (names are unique), only within `scaleSetId` when given. */
export async function findInstance(db: D1Database, name: string, scaleSetId?: string): Promise<InstanceSummary | null> {
  const row = await instanceByName(db, SUMMARY_COLUMNS, name, scaleSetId);
  return row && summary(row);
}

/** findInstance, with the sealed JIT config. */
export async function findInstanceWithJitConfig(db: D1Database, name: string, scaleSetId?: string): Promise<InstanceWithJitConfig | null> {
  const row = await instanceByName(db, `${SUMMARY_COLUMNS}, jit_config_enc`, name, scaleSetId);
  return row && { ...summary(row), jitConfigEnc: row.jit_config_enc };
}

/**
 * findInstance (with the sealed JIT config when `withJitConfig`) and the runner setup of the
 * scale set `setupOf` (the one the caller's token names), in one round trip: a booting
 * machine's metadata routes need both, and read apart they were two.
 */
export async function findInstanceAndSetup(
  db: D1Database,
  name: string,
  setupOf: string,
  opts: { withJitConfig: boolean },
): Promise<{ instance: InstanceWithJitConfig | InstanceSummary | null; setup: RunnerSetup | null }> {
  const [found, setup] = await db.batch<Record<string, any>>([
    findInstanceStatement(db, name, opts),
    runnerSetupStatement(db, setupOf, name),
  ]);
  return { instance: instanceFromRow(found!.results[0], opts), setup: runnerSetupFromRow(setupOf, setup!.results[0]) };
}

/** findInstance's statement (by name only), for a caller that batches it with other statements; its row goes to instanceFromRow. */
export function findInstanceStatement(db: D1Database, name: string, opts: { withJitConfig: boolean }): D1PreparedStatement {
  return instanceByNameStatement(db, opts.withJitConfig ? `${SUMMARY_COLUMNS}, jit_config_enc` : SUMMARY_COLUMNS, name, undefined);
}

export function instanceFromRow(
  row: Record<string, any> | null | undefined,
  opts: { withJitConfig: boolean },
): InstanceWithJitConfig | InstanceSummary | null {
  if (!row) return null;
  return opts.withJitConfig ? { ...summary(row), jitConfigEnc: row.jit_config_enc } : summary(row);
}

function instanceByName(db: D1Database, columns: string, name: string, scaleSetId: string | undefined) {
  return instanceByNameStatement(db, columns, name, scaleSetId).first<Record<string, any>>();
}

function instanceByNameStatement(db: D1Database, columns: string, name: string, scaleSetId: string | undefined): D1PreparedStatement {
  return scaleSetId === undefined
    ? db.prepare(`SELECT ${columns} FROM instances WHERE name = ?`).bind(name)
    : db.prepare(`SELECT ${columns} FROM instances WHERE name = ? AND scale_set_id = ?`).bind(name, scaleSetId);
}

function summary(row: Record<string, any>): InstanceSummary {
  return {
    id: row.id,
    name: row.name,
    scaleSetId: row.scale_set_id,
    status: row.status,
    runnerStatus: row.runner_status,
    createAttempt: row.create_attempt,
    agentId: row.agent_id,
    hasJitConfig: Boolean(row.has_jit_config),
    jitOnBoot: Boolean(row.jit_on_boot),
    osType: row.os_type,
    osArch: row.os_arch,
  };
}

/** The scale set an instance belongs to and that scale set's provider (a shim callback's check). */
export async function instanceOwner(db: Db, name: string): Promise<{ scaleSetId: string; providerId: string } | null> {
  const [owner] = await db
    .select({ scaleSetId: instances.scaleSetId, providerId: scaleSets.providerId })
    .from(instances)
    .innerJoin(scaleSets, eq(scaleSets.id, instances.scaleSetId))
    .where(eq(instances.name, name));
  return owner ?? null;
}

/** Which of these names a live instance has, in any scale set. */
export async function liveInstanceNames(db: D1Database, names: string[]): Promise<Set<string>> {
  const live = new Set<string>();
  // Chunks keep each statement under D1's 100 bound parameters.
  for (let i = 0; i < names.length; i += 90) {
    const chunk = names.slice(i, i + 90);
    const res = await db
      .prepare(`SELECT name FROM instances WHERE status != 'deleted' AND name IN (${chunk.map(() => "?").join(",")})`)
      .bind(...chunk)
      .all<{ name: string }>();
    for (const row of res.results) live.add(row.name);
  }
  return live;
}

/** The create attempt a booting machine speaks for: what it writes is dropped once the instance is recreated. */
export type InstanceAttempt = Pick<InstanceSummary, "id" | "createAttempt">;

/** An instance's row without its history, which only the one instance's page reads. */
export type InstanceRow = Omit<typeof instances.$inferSelect, "transitions">;

const { transitions: _history, ...ROW_COLUMNS } = getTableColumns(instances);

/** Instances, oldest first, of one status and/or one scale set when given. */
export function listInstances(
  db: Db,
  filter: { status?: InstanceStatus | undefined; scaleSetId?: string | undefined },
): Promise<InstanceRow[]> {
  const filters: SQL[] = [];
  if (filter.status) filters.push(eq(instances.status, filter.status));
  if (filter.scaleSetId) filters.push(eq(instances.scaleSetId, filter.scaleSetId));
  return db
    .select(ROW_COLUMNS)
    .from(instances)
    .where(and(...filters))
    .orderBy(instances.createdAt);
}

/** A scale set's instances, oldest first, in one round trip with the check that the scale set exists: null when it does not. */
export async function scaleSetInstances(db: Db, scaleSetId: string): Promise<InstanceRow[] | null> {
  const [found, rows] = await db.batch([
    db.select({ id: scaleSets.id }).from(scaleSets).where(eq(scaleSets.id, scaleSetId)),
    db.select(ROW_COLUMNS).from(instances).where(eq(instances.scaleSetId, scaleSetId)).orderBy(instances.createdAt),
  ]);
  return found.length ? rows : null;
}

/** An instance by name with its history, newest first. */
export async function instanceWithTransitions(
  db: Db,
  name: string,
): Promise<{ instance: InstanceRow; transitions: InstanceTransition[] } | null> {
  const [found] = await db.select().from(instances).where(eq(instances.name, name));
  if (!found) return null;
  const { transitions, ...instance } = found;
  return { instance, transitions: [...transitions].reverse() };
}
