import { and, eq, getTableColumns, type SQL } from "drizzle-orm";
import type { Db } from "../client";
import { type RunnerSetup, runnerSetupFromRow, runnerSetupStatement } from "../scaleset/runner-setup-store";
import { scaleSets } from "../scaleset/schema";
import { type InstanceStatus, type InstanceTransition, instances, type RunnerStatus } from "./schema";

/**
 * Lookups of instances in D1: one instance by name for the routes a booting machine calls and the
 * scale set object (with its sealed JIT config only for the one route that opens it, and with its
 * scale set's runner setup in the same round trip), who owns an instance, which names are live,
 * and the admin API's listings. The lifecycle writes are instance-store.ts's.
 */

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
