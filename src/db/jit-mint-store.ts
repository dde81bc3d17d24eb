import type { InstanceAttempt } from "./instance-store";

/**
 * D1 access for JIT configs minted on boot (scale sets with `jit_config_timing: on_boot`): the
 * one mint of a create attempt is claimed by one conditional UPDATE, so of racing or retried
 * requests exactly one calls GitHub; the others read what it sealed. The claim's holder keeps
 * `jit_asked_at` fresh while it waits (`keepJitClaim`); a claim not kept since `staleBefore` is
 * taken over (the request that held it was cut off).
 */

/** An on-boot instance as a waiting request sees it (null: gone, recreated, or no longer bootstrapping). */
export interface JitMintState {
  jitConfigEnc: string | null;
  claimedAt: number | null;
}

/** Claims the mint; returns whether this request won. Also restarts the machine's bootstrap clock (it is asking). */
export async function claimJitMint(db: D1Database, inst: InstanceAttempt, at: number, staleBefore: number): Promise<boolean> {
  const claim = await db
    .prepare(
      `UPDATE instances SET jit_claimed_at = ?1, jit_asked_at = ?1
        WHERE id = ?2 AND create_attempt = ?3 AND jit_on_boot = 1 AND jit_config_enc IS NULL
          AND status IN ('creating', 'running') AND runner_status IN ('pending', 'installing')
          AND (jit_claimed_at IS NULL OR coalesce(jit_asked_at, 0) < ?4)`,
    )
    .bind(at, inst.id, inst.createAttempt, staleBefore)
    .run();
  return Boolean(claim.meta.changes);
}

/** The claim made at `claimedAt` is still held and waiting (its machine is asking); false if it was taken over or the instance moved on. */
export async function keepJitClaim(db: D1Database, instanceId: string, claimedAt: number, at: number): Promise<boolean> {
  const kept = await db
    .prepare(
      `UPDATE instances SET jit_asked_at = ?
        WHERE id = ? AND jit_claimed_at = ? AND jit_config_enc IS NULL AND status IN ('creating', 'running')`,
    )
    .bind(at, instanceId, claimedAt)
    .run();
  return Boolean(kept.meta.changes);
}

/** Claims per statement: two bound values each, within D1's 100 per statement. */
const KEEP_CHUNK = 49;

/**
 * `keepJitClaim` for many waiting requests at once (one round trip): the instance ids whose claim
 * is still held and waiting, now kept.
 */
export async function keepJitClaims(db: D1Database, claims: { instanceId: string; claimedAt: number }[], at: number): Promise<Set<string>> {
  if (!claims.length) return new Set();
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < claims.length; i += KEEP_CHUNK) {
    const chunk = claims.slice(i, i + KEEP_CHUNK);
    const pairs = chunk.map((_, j) => `(?${2 + 2 * j}, ?${3 + 2 * j})`).join(", ");
    statements.push(
      db
        .prepare(
          `UPDATE instances SET jit_asked_at = ?1
            WHERE (id, jit_claimed_at) IN (VALUES ${pairs}) AND jit_config_enc IS NULL AND status IN ('creating', 'running')
            RETURNING id`,
        )
        .bind(at, ...chunk.flatMap((c) => [c.instanceId, c.claimedAt])),
    );
  }
  const results = await db.batch<{ id: string }>(statements);
  return new Set(results.flatMap((r) => r.results.map((row) => row.id)));
}

/** Gives back the claim made at `claimedAt` (nothing was minted); the machine asked at `at`. */
export async function releaseJitMint(db: D1Database, instanceId: string, claimedAt: number, at: number): Promise<void> {
  await db
    .prepare("UPDATE instances SET jit_claimed_at = NULL, jit_asked_at = ? WHERE id = ? AND jit_claimed_at = ? AND jit_config_enc IS NULL")
    .bind(at, instanceId, claimedAt)
    .run();
}

/**
 * Stores what the claim made at `claimedAt` minted: the sealed config and GitHub's runner id (so
 * a later removal deletes by an id GitHub gave). The bootstrap clock restarts at the mint.
 * Returns false if the claim was lost meanwhile (the instance moved on; its runner is an orphan
 * for the drift check).
 */
export async function storeMintedJit(
  db: D1Database,
  instanceId: string,
  claimedAt: number,
  minted: { jitConfigEnc: string; runnerId: number },
  at: number,
): Promise<boolean> {
  const stored = await db
    .prepare(
      `UPDATE instances SET jit_config_enc = ?, agent_id = ?, jit_asked_at = ?, updated_at = ?
        WHERE id = ? AND jit_claimed_at = ? AND jit_config_enc IS NULL AND status IN ('creating', 'running')`,
    )
    .bind(minted.jitConfigEnc, minted.runnerId, at, at, instanceId, claimedAt)
    .run();
  return Boolean(stored.meta.changes);
}

/** Where the instance's mint stands, for a request waiting on another's claim. */
export async function readJitMint(db: D1Database, inst: InstanceAttempt): Promise<JitMintState | null> {
  const row = await db
    .prepare(
      `SELECT jit_config_enc, jit_claimed_at FROM instances
        WHERE id = ? AND create_attempt = ? AND status IN ('creating', 'running') AND runner_status IN ('pending', 'installing')`,
    )
    .bind(inst.id, inst.createAttempt)
    .first<{ jit_config_enc: string | null; jit_claimed_at: number | null }>();
  return row ? { jitConfigEnc: row.jit_config_enc, claimedAt: row.jit_claimed_at } : null;
}

/** How many of a scale set's machines have a mint claimed and not done: in line for the GitHub budget, or at GitHub. */
export async function jitWaitingCount(db: D1Database, scaleSetId: string): Promise<number> {
  const row = await db
    .prepare(
      `SELECT count(*) AS n FROM instances
        WHERE scale_set_id = ? AND jit_on_boot = 1 AND jit_config_enc IS NULL AND jit_claimed_at IS NOT NULL AND status != 'deleted'`,
    )
    .bind(scaleSetId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}
