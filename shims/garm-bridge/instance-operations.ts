import { randomUUID } from "node:crypto";
import type { ShimCallback, ValidProviderInstance } from "../../src/providers/shim-protocol.ts";
import type { CallbackSender } from "./callbacks.ts";
import type { BridgeConfig } from "./config.ts";
import { type Logger, redact } from "./log.ts";
import { type Failure, parseInstance, parseInstanceList } from "./outcome.ts";
import { type Pool, type ProviderCaller, poolCall } from "./provider-calls.ts";

/**
 * What the bridge does with machines, over the provider calls: lookups, idempotent creates
 * and deletes, and the async callbacks that report them.
 *
 * Idempotent create: a create for a name whose create is still running joins it (same
 * answer, or the same operation id when async); otherwise the provider is asked first
 * (GetInstance with GARM_INSTANCE_ID = the name, GARM's rule for machines without a known
 * provider id) and an existing machine is answered 200 without running CreateInstance. A
 * CreateInstance that exits 31 (duplicate) is looked up the same way, so a machine created
 * by a run the bridge has forgotten (a restart) is still found.
 */

export type CreateResult = { ok: true; status: 200 | 201; instance: ValidProviderInstance } | { ok: false; failure: Failure };
export type DeleteResult = { ok: true; found: boolean } | { ok: false; failure: Failure };
type Found<T> = { ok: true } & T;
type Failed = { ok: false; failure: Failure };
type Settled = { ok: true } | Failed;

interface Operation<T> {
  operationId: string;
  promise: Promise<T>;
}

export type InstanceOperations = ReturnType<typeof createInstanceOperations>;

export function createInstanceOperations(cfg: BridgeConfig, provider: ProviderCaller, log: Logger, callbacks: CallbackSender | null) {
  const secrets = [cfg.secret, ...cfg.previous_secrets];
  /** Creates and deletes under way, by pool and name/id: what makes retries join instead of repeat. */
  const creates = new Map<string, Operation<CreateResult>>();
  const deletes = new Map<string, Operation<DeleteResult>>();
  const work = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    work.add(p);
    void p.finally(() => work.delete(p)).catch(() => {});
    return p;
  };
  const key = (pool: Pool, id: string) => `${pool.poolId}\u0000${id}`;

  /** provider_id → instance name, from every machine the provider showed us: async delete callbacks must name the instance. */
  const names = new Map<string, string>();
  /**
   * Provider ids deleted lately. A GetInstance that read the machine just before its delete can
   * finish after it: it must not put the machine back, or a repeated delete would answer 202
   * for a machine that is gone instead of 404.
   */
  const deleted = new Set<string>();
  const remember = (pool: Pool, instances: ValidProviderInstance[]) => {
    for (const i of instances) {
      const k = key(pool, i.provider_id);
      if (deleted.has(k)) continue;
      names.delete(k);
      names.set(k, i.name);
    }
    // Oldest first in a Map: drop from the front.
    for (const k of names.keys()) {
      if (names.size <= 50_000) break;
      names.delete(k);
    }
  };

  /** GetInstance by name or id: the machine, null when the provider says not found, or a failure. */
  async function lookup(pool: Pool, id: string, hide: string[], expectedName?: string): Promise<Found<{ instance: ValidProviderInstance | null }> | Failed> {
    const got = await provider.run(poolCall("GetInstance", pool, id), undefined, hide);
    if (got.type === "not_found") return { ok: true, instance: null };
    if (got.type === "failed") return { ok: false, failure: got.failure };
    if (got.type === "duplicate") return { ok: false, failure: { status: 500, retryable: true, message: got.message } };
    const parsed = parseInstance("GetInstance", got.stdout, expectedName);
    if (!parsed.ok) return { ok: false, failure: { ...parsed.failure, message: redact(parsed.failure.message, [...secrets, ...hide]) } };
    remember(pool, [parsed.value]);
    return { ok: true, instance: parsed.value };
  }

  /** ListInstances: every machine of the pool, remembered for later delete callbacks. */
  async function list(pool: Pool): Promise<Found<{ instances: ValidProviderInstance[] }> | Failed> {
    const out = await provider.run(poolCall("ListInstances", pool), undefined, []);
    if (out.type === "failed") return { ok: false, failure: out.failure };
    if (out.type !== "ok") return { ok: false, failure: { status: 500, retryable: true, message: out.message } };
    const parsed = parseInstanceList(out.stdout);
    if (!parsed.ok) return parsed;
    remember(pool, parsed.value);
    return { ok: true, instances: parsed.value };
  }

  async function create(pool: Pool, name: string, raw: Uint8Array, token: string): Promise<CreateResult> {
    const hide = [token];
    if (cfg.create_lookup === "get") {
      const existing = await lookup(pool, name, hide, name);
      if (!existing.ok) return { ok: false, failure: { ...existing.failure, message: `checking whether ${name} exists: ${existing.failure.message}` } };
      if (existing.instance) {
        log("create_found_existing", { scale_set: pool.poolId, instance: name, provider_id: existing.instance.provider_id });
        return { ok: true, status: 200, instance: existing.instance };
      }
    }
    const made = await provider.run(poolCall("CreateInstance", pool), raw, hide);
    if (made.type === "ok") {
      const parsed = parseInstance("CreateInstance", made.stdout, name);
      if (!parsed.ok) return { ok: false, failure: { ...parsed.failure, message: redact(parsed.failure.message, [...secrets, token]) } };
      deleted.delete(key(pool, parsed.value.provider_id));
      remember(pool, [parsed.value]);
      return { ok: true, status: 201, instance: parsed.value };
    }
    if (made.type === "duplicate") {
      // Ours from a run we no longer remember, or someone else's: only a lookup can tell.
      const existing = await lookup(pool, name, hide, name);
      if (existing.ok && existing.instance) return { ok: true, status: 200, instance: existing.instance };
      return { ok: false, failure: { status: 409, retryable: false, message: made.message } };
    }
    if (made.type === "not_found") return { ok: false, failure: { status: 500, retryable: true, message: made.message } };
    return { ok: false, failure: made.failure };
  }

  async function remove(pool: Pool, id: string): Promise<DeleteResult> {
    // A delete racing the create of the same name would find nothing and leave the machine behind.
    await creates.get(key(pool, id))?.promise;
    const done = await provider.run(poolCall("DeleteInstance", pool, id), undefined, []);
    if (done.type === "ok" || done.type === "not_found") {
      // {id} is the provider id or the name: forget the machine under its provider id either way.
      const prefix = key(pool, "");
      const gone = [key(pool, id), ...[...names].filter(([k, name]) => name === id && k.startsWith(prefix)).map(([k]) => k)];
      for (const k of gone) {
        names.delete(k);
        deleted.add(k);
      }
      for (const old of deleted) {
        if (deleted.size <= 10_000) break;
        deleted.delete(old);
      }
      return { ok: true, found: done.type === "ok" };
    }
    if (done.type === "duplicate") return { ok: false, failure: { status: 500, retryable: true, message: done.message } };
    return { ok: false, failure: done.failure };
  }

  /** In async mode, reports an operation's outcome to the coordinator once it settles. */
  function reportWhenDone<T extends Settled>(op: Operation<T>, instanceName: string, result: (r: T) => ValidProviderInstance | null) {
    if (!cfg.async) return;
    void track(
      op.promise.then((r) => {
        const settled: Settled = r;
        const callback: ShimCallback = {
          operation_id: op.operationId,
          instance_name: instanceName,
          result: result(r),
          error: settled.ok ? null : { message: settled.failure.message.slice(0, 16 * 1024), retryable: settled.failure.retryable },
        };
        if (callbacks) void callbacks.send(callback);
      }),
    );
  }

  /** Starts the create of `name`, or joins the one under way. */
  function startCreate(pool: Pool, name: string, raw: Uint8Array, token: string): Operation<CreateResult> & { joined: boolean } {
    const k = key(pool, name);
    const existing = creates.get(k);
    if (existing) {
      log("create_joined", { scale_set: pool.poolId, instance: name, operation_id: existing.operationId });
      return { ...existing, joined: true };
    }
    const entry = { operationId: `op-${randomUUID()}`, promise: track(create(pool, name, raw, token)).finally(() => creates.delete(k)) };
    creates.set(k, entry);
    reportWhenDone(entry, name, (r) => (r.ok ? r.instance : null));
    return { ...entry, joined: false };
  }

  /**
   * The instance name an async delete's callback must carry, when `{id}` may be a provider id:
   * from a machine seen before, a create under way, or the provider itself (GetInstance). Null
   * when the provider does not know the machine: the delete is then already done (404).
   */
  async function nameFor(pool: Pool, id: string): Promise<Found<{ name: string | null }> | Failed> {
    const known = names.get(key(pool, id));
    if (known) return { ok: true, name: known };
    if (creates.has(key(pool, id))) return { ok: true, name: id };
    const got = await lookup(pool, id, []);
    if (!got.ok) return got;
    return { ok: true, name: got.instance ? got.instance.name : null };
  }

  /** Starts the delete of `id`, or returns the one under way. */
  function startDelete(pool: Pool, id: string, name: string): Operation<DeleteResult> {
    const k = key(pool, id);
    const existing = deletes.get(k);
    if (existing) return existing;
    const entry = { operationId: `op-${randomUUID()}`, promise: track(remove(pool, id)).finally(() => deletes.delete(k)) };
    deletes.set(k, entry);
    reportWhenDone(entry, name, () => null);
    return entry;
  }

  return {
    lookup,
    list,
    startCreate,
    startDelete,
    nameFor,
    /** The delete of `id` under way, if any. */
    deleteUnderWay: (pool: Pool, id: string): Operation<DeleteResult> | undefined => deletes.get(key(pool, id)),
    /** Whether a create of `name` is under way. */
    creating: (pool: Pool, name: string): boolean => creates.has(key(pool, name)),
    /** Creates, deletes and callback hand-offs under way: stop() lets them finish. */
    underWay: (): Promise<unknown>[] => [...work],
  };
}
