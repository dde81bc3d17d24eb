import type { PollerState } from "../../forges/forgejo/poller";
import type { SqlPort } from "../../lib/metered-sql";
import { type CreateBackoff, NO_CREATE_BACKOFF } from "../backoff";
import type { SpendGuard } from "../guards/spend-guard";
import { type BootSamples, NO_BOOT_SAMPLES } from "../jit/create-pacing";
import type { StoredListener } from "../listener/listener";
import type { LastReconcile } from "./status-types";

/**
 * The ScaleSet object's own SQLite: its identity, backoff state, per-instance operation and
 * retry state, and the timers its single alarm is armed from. Everything here is about the
 * object's work in progress; the instances themselves live in D1.
 */

export interface InstanceOps {
  instance: string;
  deleteAttempts: number;
  retryAt: number | null;
  opId: string | null;
  opKind: "create" | "delete" | null;
  pollAt: number | null;
}

/** What the GitHub budget last did to this scale set's creates (scaleset/jit/github-pacing.ts). */
export interface BudgetWait {
  /** The budget window in which this object last fell short (counted and logged once per window). */
  windowStart: number;
  /** When that window ends and the budget frees; null once a pass got all it wanted. */
  freesAt: number | null;
  wanted: number;
  granted: number;
}

/** What on-boot create pacing last decided (scaleset/jit/on-boot-pacing.ts), for the status. */
export interface CreatePacing {
  at: number;
  leadMs: number;
  leadSource: "setting" | "observed" | "default";
  bootSamples: number;
  /** JIT configs a minute the pool's usable credentials mint, and how many of them are usable. */
  jitPerMinute: number;
  credentialsUsable: number;
  credentials: number;
  /** Machines created and not minted yet. */
  unminted: number;
  wanted: number;
  allowed: number;
  nextCreateAt: number | null;
  lineClearsAt: number | null;
}

/** The min idle the last pass planned with and why (scaleset/schedule/min-idle-keeping.ts), for the status. */
export interface MinIdleScheduleState {
  minIdle: number;
  /** The schedule entry it came from; null: the scale set's own min_idle_runners. */
  entry: string | null;
  since: number | null;
  until: number | null;
  /** How far ahead prewarm entries start (the scale set's boot time). */
  leadMs: number;
}

/** Timers kept in memory only (see setTimer). */
const VOLATILE_TIMERS = new Set(["tick", "wake"]);

export class ObjectState {
  constructor(private readonly sql: SqlPort) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS instance_ops (
        instance TEXT PRIMARY KEY,
        delete_attempts INTEGER NOT NULL DEFAULT 0,
        retry_at INTEGER,
        op_id TEXT,
        op_kind TEXT,
        poll_at INTEGER
      );
      CREATE TABLE IF NOT EXISTS timers (name TEXT PRIMARY KEY, due_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS job_checks (job_id INTEGER PRIMARY KEY, checked_at INTEGER NOT NULL);
    `);
  }

  // The meta rows as stored (JSON text; null: no row), read once per key. This object is the
  // only writer of its SQLite and every write goes through setMeta/deleteMeta/clear, so the copy
  // stays exact; it saves a SQLite query on every request (each one binds, i.e. reads
  // scale_set_id) and in every pass. Values are parsed on each read, so a caller that changes
  // what it got changes nothing stored.
  private readonly meta = new Map<string, string | null>();

  private getMeta<T>(key: string): T | null {
    let text = this.meta.get(key);
    if (text === undefined) {
      text = this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key).toArray()[0]?.value ?? null;
      this.meta.set(key, text);
    }
    return text === null ? null : (JSON.parse(text) as T);
  }

  private setMeta(key: string, value: unknown): void {
    const text = JSON.stringify(value);
    // Rows written are billed: a value that did not change is not written again.
    if (this.meta.get(key) === text) return;
    this.sql.exec("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, text);
    this.meta.set(key, text);
  }

  private deleteMeta(key: string): void {
    this.sql.exec("DELETE FROM meta WHERE key = ?", key);
    this.meta.set(key, null);
  }

  get scaleSetId(): string | null {
    return this.getMeta<string>("scale_set_id");
  }

  bind(scaleSetId: string): void {
    const known = this.scaleSetId;
    if (known && known !== scaleSetId) throw new Error(`this object belongs to scale set ${known}, not ${scaleSetId}`);
    if (!known) {
      this.setMeta("scale_set_id", scaleSetId);
      // A new scale set has nothing to drift from yet: its first drift check comes one interval on.
      this.setMeta("last_orphan_check", Date.now());
    }
  }

  get createBackoff(): CreateBackoff {
    return this.getMeta<CreateBackoff>("create_backoff") ?? NO_CREATE_BACKOFF;
  }

  set createBackoff(value: CreateBackoff) {
    this.setMeta("create_backoff", value);
  }

  /** The scale set's updated_at when the hard limit was hit: an update after it lifts the limit. */
  get hardLimitVersion(): number | null {
    return this.getMeta<number>("hard_limit_version");
  }

  set hardLimitVersion(value: number | null) {
    this.setMeta("hard_limit_version", value);
  }

  /**
   * The last reconcile run, kept in memory; stored only when the run acted or failed, so an idle
   * scale set's every tick does not write a row (rows written are billed). After a restart the
   * status shows the last run that did something until the next run.
   */
  private lastRun: LastReconcile | null = null;

  get lastReconcile(): LastReconcile | null {
    return this.lastRun ?? this.getMeta<LastReconcile>("last_reconcile");
  }

  set lastReconcile(value: LastReconcile) {
    this.lastRun = value;
    if (Object.keys(value.actions ?? {}).length > 0 || value.error !== null) this.setMeta("last_reconcile", value);
  }

  /** Unlisted instances whose machine the provider failed to confirm, by name: see drift.ts. */
  get unconfirmedMachines(): Record<string, number> {
    return this.getMeta<Record<string, number>>("unconfirmed_machines") ?? {};
  }

  set unconfirmedMachines(value: Record<string, number>) {
    this.setMeta("unconfirmed_machines", value);
  }

  get budgetWait(): BudgetWait | null {
    return this.getMeta<BudgetWait>("budget_wait");
  }

  set budgetWait(value: BudgetWait) {
    this.setMeta("budget_wait", value);
  }

  /** Recent boot times of this scale set's machines (create to first ask): its create lead. */
  get bootSamples(): BootSamples {
    return this.getMeta<BootSamples>("boot_samples") ?? NO_BOOT_SAMPLES;
  }

  set bootSamples(value: BootSamples) {
    this.setMeta("boot_samples", value);
  }

  get createPacing(): CreatePacing | null {
    return this.getMeta<CreatePacing>("create_pacing");
  }

  set createPacing(value: CreatePacing) {
    this.setMeta("create_pacing", value);
  }

  /** The spend guard as the last pass found it (scaleset/guards/spend-guard.ts); null: no cap. */
  get spendGuard(): (SpendGuard & { at: number }) | null {
    return this.getMeta<SpendGuard & { at: number }>("spend_guard");
  }

  set spendGuard(value: (SpendGuard & { at: number }) | null) {
    if (value === null) this.deleteMeta("spend_guard");
    else this.setMeta("spend_guard", value);
  }

  get minIdleSchedule(): MinIdleScheduleState | null {
    return this.getMeta<MinIdleScheduleState>("min_idle_schedule");
  }

  set minIdleSchedule(value: MinIdleScheduleState) {
    this.setMeta("min_idle_schedule", value);
  }

  get lastOrphanCheck(): number {
    return this.getMeta<number>("last_orphan_check") ?? 0;
  }

  set lastOrphanCheck(at: number) {
    this.setMeta("last_orphan_check", at);
  }

  /** The scale set API listener's state (its queue token sealed), with the entity it talks to. */
  get listener(): StoredListener | null {
    return this.getMeta<StoredListener>("listener");
  }

  set listener(value: StoredListener | null) {
    if (value === null) this.deleteMeta("listener");
    else this.setMeta("listener", value);
  }

  /** The Forgejo poller's state (intake `poll`): its backoff and the jobs it holds. */
  get poller(): PollerState | null {
    return this.getMeta<PollerState>("forgejo_poller");
  }

  set poller(value: PollerState | null) {
    if (value === null) this.deleteMeta("forgejo_poller");
    else this.setMeta("forgejo_poller", value);
  }

  /** The runner scale set's id at GitHub, once the listener registered it. */
  get listenerScaleSetId(): number | null {
    return this.listener?.state.githubScaleSetId ?? null;
  }

  allOps(): Map<string, InstanceOps> {
    const rows = this.sql.exec<OpsRow>("SELECT * FROM instance_ops").toArray();
    return new Map(rows.map((r) => [r.instance, opsOf(r)]));
  }

  /** One instance's row by its key: a burst updates every new instance's ops, so reading them all each time would be quadratic. */
  ops(instance: string): InstanceOps | null {
    const row = this.sql.exec<OpsRow>("SELECT * FROM instance_ops WHERE instance = ?", instance).toArray()[0];
    return row ? opsOf(row) : null;
  }

  setOps(o: InstanceOps): void {
    this.sql.exec(
      `INSERT INTO instance_ops (instance, delete_attempts, retry_at, op_id, op_kind, poll_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(instance) DO UPDATE SET delete_attempts = excluded.delete_attempts, retry_at = excluded.retry_at,
         op_id = excluded.op_id, op_kind = excluded.op_kind, poll_at = excluded.poll_at`,
      o.instance,
      o.deleteAttempts,
      o.retryAt,
      o.opId,
      o.opKind,
      o.pollAt,
    );
  }

  updateOps(instance: string, patch: Partial<Omit<InstanceOps, "instance">>): void {
    const current = this.ops(instance) ?? { instance, deleteAttempts: 0, retryAt: null, opId: null, opKind: null, pollAt: null };
    this.setOps({ ...current, ...patch });
  }

  /** Forgets state of instances that are gone (deleted, or no longer in D1). */
  pruneOps(keep: Set<string>): void {
    for (const name of this.allOps().keys()) if (!keep.has(name)) this.sql.exec("DELETE FROM instance_ops WHERE instance = ?", name);
  }

  /**
   * Timers every pass sets again (the tick, the plan's next wake) live in memory: a stored row
   * would be rewritten on every pass, and the stored alarm they were armed with still fires after
   * a restart, whose pass sets them again. The others are stored, and written only when they change.
   */
  private readonly volatile = new Map<string, number>();

  setTimer(name: string, dueAt: number | null): void {
    if (VOLATILE_TIMERS.has(name)) {
      if (dueAt === null) this.volatile.delete(name);
      else this.volatile.set(name, dueAt);
      return;
    }
    if (this.timer(name) === dueAt) return;
    if (dueAt === null) this.sql.exec("DELETE FROM timers WHERE name = ?", name);
    else
      this.sql.exec(
        "INSERT INTO timers (name, due_at) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET due_at = excluded.due_at",
        name,
        dueAt,
      );
  }

  /** When a timer is due, or null: not armed. */
  timer(name: string): number | null {
    if (VOLATILE_TIMERS.has(name)) return this.volatile.get(name) ?? null;
    return this.sql.exec<{ due_at: number }>("SELECT due_at FROM timers WHERE name = ?", name).toArray()[0]?.due_at ?? null;
  }

  /** The earliest due time of any timer or instance retry/poll. */
  nextDue(): number | null {
    const row = this.sql
      .exec<{ due: number | null }>(
        `SELECT min(due) AS due FROM (
           SELECT min(due_at) AS due FROM timers
           UNION ALL SELECT min(retry_at) FROM instance_ops
           UNION ALL SELECT min(poll_at) FROM instance_ops)`,
      )
      .toArray()[0];
    const stored = row?.due ?? null;
    const inMemory = this.volatile.size ? Math.min(...this.volatile.values()) : null;
    return stored === null ? inMemory : inMemory === null ? stored : Math.min(stored, inMemory);
  }

  /** When each queued job was last re-checked against GitHub. */
  jobChecks(): Map<number, number> {
    const rows = this.sql.exec<{ job_id: number; checked_at: number }>("SELECT job_id, checked_at FROM job_checks").toArray();
    return new Map(rows.map((r) => [r.job_id, r.checked_at]));
  }

  recordJobChecks(jobIds: number[], at: number, keep: Set<number>): void {
    for (const id of jobIds) {
      this.sql.exec(
        "INSERT INTO job_checks (job_id, checked_at) VALUES (?, ?) ON CONFLICT(job_id) DO UPDATE SET checked_at = excluded.checked_at",
        id,
        at,
      );
    }
    for (const id of this.jobChecks().keys())
      if (!keep.has(id) && !jobIds.includes(id)) this.sql.exec("DELETE FROM job_checks WHERE job_id = ?", id);
  }

  clear(): void {
    this.sql.exec("DELETE FROM meta; DELETE FROM instance_ops; DELETE FROM timers; DELETE FROM job_checks;");
    this.meta.clear();
    this.volatile.clear();
    this.lastRun = null;
  }
}

type OpsRow = {
  instance: string;
  delete_attempts: number;
  retry_at: number | null;
  op_id: string | null;
  op_kind: string | null;
  poll_at: number | null;
};

const opsOf = (r: OpsRow): InstanceOps => ({
  instance: r.instance,
  deleteAttempts: r.delete_attempts,
  retryAt: r.retry_at,
  opId: r.op_id,
  opKind: r.op_kind as InstanceOps["opKind"],
  pollAt: r.poll_at,
});
