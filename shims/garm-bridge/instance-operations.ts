import { randomUUID } from "node:crypto";
import { mapLimit } from "../../src/lib/map-limit.ts";
import type { ShimCallback, ValidProviderInstance } from "../../src/providers/shim-protocol.ts";
import type { CallbackSender } from "./callbacks.ts";
import type { BridgeConfig } from "./config.ts";
import { type Logger, redact } from "./log.ts";
import { type Failure, parseInstance, parseInstanceList } from "./outcome.ts";
import { type Pool, type ProviderCaller, poolCall } from "./provider-calls.ts";

/**
 * What the bridge does with machines, over the provider calls: lookups, idempotent creates,
 * pool-scoped deletes, and the async callbacks that report them.
 *
 * Creates run CreateInstance straight away, as GARM does: no GetInstance first (providers
 * such as GARM's contrib scripts exit 1, not 30, for a machine that does not exist, and would
 * never get a create). A retried create stays idempotent through the bridge's own records: a
 * create of the same name and pool still running is joined (same answer, or the same
 * operation id when async), and one this bridge finished is answered from its record (200)
 * without running CreateInstance again. `create_lookup` adds a question to the provider before
 * each create, for a retry that comes after a bridge restart: `list` (ListInstances, found by
 * name) or `get` (GetInstance by name, for providers that exit 30 when it is missing). A
 * CreateInstance that exits 31 (duplicate) is looked up by name.
 *
 * Deletes, starts and stops act only on a machine of the caller's pool. GARM v0.1.0 passes no
 * pool to DeleteInstance and many providers ignore it in v0.1.1 too, so the bridge checks
 * itself: a machine it created for the pool or the provider listed for it (ListInstances,
 * asked when the bridge has no record). Another pool's machine is answered 404, untouched.
 * Remove-all deletes the pool's listed machines one by one for the same reason.
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

  /**
   * The machines this bridge knows to belong to a pool, by pool and provider id and by pool and
   * name (both → name): from its own creates and from the pool's ListInstances. GetInstance
   * results are not recorded, since a provider may find another pool's machine by id.
   */
  const owned = new Map<string, { name: string; providerId: string }>();
  /** Machines created here, by pool and name: a retried create is answered from this. */
  const made = new Map<string, ValidProviderInstance>();
  /**
   * Machines deleted lately, by pool and provider id (and name). A ListInstances that read the
   * machine just before its delete can finish after it: it must not put the machine back, or a
   * repeated delete would answer 202 for a machine that is gone instead of 404.
   */
  const deleted = new Set<string>();
  /** Oldest first in a Map: drop from the front. */
  const bound = (m: Map<string, unknown>) => {
    for (const k of m.keys()) {
      if (m.size <= 50_000) break;
      m.delete(k);
    }
  };
  const remember = (pool: Pool, instances: ValidProviderInstance[]) => {
    for (const i of instances) {
      if (deleted.has(key(pool, i.provider_id))) continue;
      for (const k of [key(pool, i.provider_id), key(pool, i.name)]) {
        owned.delete(k);
        owned.set(k, { name: i.name, providerId: i.provider_id });
      }
    }
    bound(owned);
  };
  /** `id` (a provider id or a name) was deleted: forget it under both. */
  const forget = (pool: Pool, id: string) => {
    const known = owned.get(key(pool, id));
    const gone = known ? [key(pool, known.name), key(pool, known.providerId)] : [key(pool, id)];
    for (const k of gone) {
      owned.delete(k);
      deleted.add(k);
    }
    made.delete(key(pool, known?.name ?? id));
    for (const old of deleted) {
      if (deleted.size <= 10_000) break;
      deleted.delete(old);
    }
  };

  /** GetInstance by name or id: the machine, null when the provider says not found, or a failure. */
  async function lookup(
    pool: Pool,
    id: string,
    hide: string[],
    expectedName?: string,
  ): Promise<Found<{ instance: ValidProviderInstance | null }> | Failed> {
    const got = await provider.run(poolCall("GetInstance", pool, id), undefined, hide);
    if (got.type === "not_found") return { ok: true, instance: null };
    if (got.type === "failed") return { ok: false, failure: got.failure };
    if (got.type === "duplicate") return { ok: false, failure: { status: 500, retryable: true, message: got.message } };
    const parsed = parseInstance("GetInstance", got.stdout, expectedName);
    if (!parsed.ok) return { ok: false, failure: { ...parsed.failure, message: redact(parsed.failure.message, [...secrets, ...hide]) } };
    return { ok: true, instance: parsed.value };
  }

  /** ListInstances: every machine of the pool, remembered as the pool's (see `owned`). */
  async function list(pool: Pool): Promise<Found<{ instances: ValidProviderInstance[] }> | Failed> {
    const out = await provider.run(poolCall("ListInstances", pool), undefined, []);
    if (out.type === "failed") return { ok: false, failure: out.failure };
    if (out.type !== "ok") return { ok: false, failure: { status: 500, retryable: true, message: out.message } };
    const parsed = parseInstanceList(out.stdout);
    if (!parsed.ok) return parsed;
    remember(pool, parsed.value);
    return { ok: true, instances: parsed.value };
  }

  /** The machine named `name` the provider lists for the pool, if any. */
  async function listedByName(pool: Pool, name: string): Promise<Found<{ instance: ValidProviderInstance | null }> | Failed> {
    const listed = await list(pool);
    if (!listed.ok) return listed;
    return { ok: true, instance: listed.instances.find((i) => i.name === name) ?? null };
  }

  async function create(pool: Pool, name: string, raw: Uint8Array, token: string): Promise<CreateResult> {
    const hide = [token];
    const known = made.get(key(pool, name));
    if (known) {
      log("create_found_existing", { scale_set: pool.poolId, instance: name, provider_id: known.provider_id, source: "bridge" });
      return { ok: true, status: 200, instance: known };
    }
    if (cfg.create_lookup !== "none") {
      const existing = cfg.create_lookup === "get" ? await lookup(pool, name, hide, name) : await listedByName(pool, name);
      if (!existing.ok)
        return { ok: false, failure: { ...existing.failure, message: `checking whether ${name} exists: ${existing.failure.message}` } };
      if (existing.instance) {
        log("create_found_existing", {
          scale_set: pool.poolId,
          instance: name,
          provider_id: existing.instance.provider_id,
          source: cfg.create_lookup,
        });
        return { ok: true, status: 200, instance: existing.instance };
      }
    }
    const out = await provider.run(poolCall("CreateInstance", pool), raw, hide);
    if (out.type === "ok") {
      const parsed = parseInstance("CreateInstance", out.stdout, name);
      if (!parsed.ok) return { ok: false, failure: { ...parsed.failure, message: redact(parsed.failure.message, [...secrets, token]) } };
      deleted.delete(key(pool, parsed.value.provider_id));
      deleted.delete(key(pool, name));
      remember(pool, [parsed.value]);
      made.delete(key(pool, name));
      made.set(key(pool, name), parsed.value);
      bound(made);
      return { ok: true, status: 201, instance: parsed.value };
    }
    if (out.type === "duplicate") {
      // Ours from a run we no longer remember, or someone else's: only a lookup can tell.
      const existing = await lookup(pool, name, hide, name);
      if (existing.ok && existing.instance) return { ok: true, status: 200, instance: existing.instance };
      return { ok: false, failure: { status: 409, retryable: false, message: out.message } };
    }
    if (out.type === "not_found") return { ok: false, failure: { status: 500, retryable: true, message: out.message } };
    return { ok: false, failure: out.failure };
  }

  /**
   * The name of machine `id` (a provider id or a name) when it belongs to the pool: from the
   * bridge's records, a create under way, or the pool's ListInstances. Null when the pool has
   * no such machine.
   */
  async function owner(pool: Pool, id: string): Promise<Found<{ name: string | null }> | Failed> {
    const known = owned.get(key(pool, id));
    if (known) return { ok: true, name: known.name };
    if (creates.has(key(pool, id))) return { ok: true, name: id };
    const listed = await list(pool);
    if (!listed.ok) return listed;
    const machine = listed.instances.find((i) => i.provider_id === id || i.name === id);
    return { ok: true, name: machine ? machine.name : null };
  }

  async function remove(pool: Pool, id: string): Promise<DeleteResult> {
    // A delete racing the create of the same name would find nothing and leave the machine behind.
    await creates.get(key(pool, id))?.promise;
    const member = await owner(pool, id);
    if (!member.ok) return member;
    if (member.name === null) {
      log("delete_refused_other_pool", { scale_set: pool.poolId, instance: id });
      return { ok: true, found: false };
    }
    const done = await provider.run(poolCall("DeleteInstance", pool, id), undefined, []);
    if (done.type === "ok" || done.type === "not_found") {
      forget(pool, id);
      return { ok: true, found: done.type === "ok" };
    }
    if (done.type === "duplicate") return { ok: false, failure: { status: 500, retryable: true, message: done.message } };
    return { ok: false, failure: done.failure };
  }

  /**
   * Every machine of the pool, deleted one by one (`concurrency` at a time). RemoveAllInstances
   * is never run: GARM never runs it, GARM's contrib scripts do not implement it, and in v0.1.0
   * it gets no pool, so a provider would remove every pool's machines.
   */
  async function removeAll(pool: Pool): Promise<Settled> {
    const listed = await list(pool);
    if (!listed.ok) return listed;
    const results = await mapLimit(listed.instances, cfg.concurrency, (i) => track(remove(pool, i.provider_id)));
    return results.find((r): r is Failed => !r.ok) ?? { ok: true };
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
    removeAll,
    owner,
    /** The delete of `id` under way, if any. */
    deleteUnderWay: (pool: Pool, id: string): Operation<DeleteResult> | undefined => deletes.get(key(pool, id)),
    /** Whether a create of `name` is under way. */
    creating: (pool: Pool, name: string): boolean => creates.has(key(pool, name)),
    /** Creates, deletes and callback hand-offs under way: stop() lets them finish. */
    underWay: (): Promise<unknown>[] => [...work],
  };
}
