import { type RunnerSetup, runnerSetupFromRow, runnerSetupStatement } from "../scaleset/runner-setup-store";
import { findInstanceStatement, type InstanceAttempt, type InstanceWithJitConfig, instanceFromRow } from "./instance-lookups";

/**
 * D1 access for JIT configs minted on boot (scale sets with `jit_config_timing: on_boot`): the
 * one mint of a create attempt is claimed by one conditional UPDATE, so of racing or retried
 * requests exactly one calls GitHub; the others read what it sealed. The claim's holder keeps
 * `jit_asked_at` fresh while it waits (`keepJitClaims`, for its isolate's whole line); a claim not kept since `staleBefore` is
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
      `UPDATE instances SET jit_claimed_at = ?1, jit_asked_at = ?1, booted_at = coalesce(booted_at, ?1)
        WHERE id = ?2 AND create_attempt = ?3 AND jit_on_boot = 1 AND jit_config_enc IS NULL
          AND status IN ('creating', 'running') AND runner_status IN ('pending', 'installing')
          AND (jit_claimed_at IS NULL OR coalesce(jit_asked_at, 0) < ?4)`,
    )
    .bind(at, inst.id, inst.createAttempt, staleBefore)
    .run();
  return Boolean(claim.meta.changes);
}

/** Who a credentials request's token says it is: the instance's name, its scale set and its create attempt. */
export interface TokenSubject {
  name: string;
  scaleSetId: string;
  createAttempt: number;
}

/**
 * A credentials request's first read, in one round trip: the instance its token names (with its
 * sealed config), its scale set's runner setup, and claimJitMint. The claim's conditions
 * include the whole token rule (instance-access.ts: the token's scale set and create attempt, a
 * live instance, a runner still bootstrapping), so a request that rule refuses claims nothing;
 * the row is read before the claim, so the caller checks it as any other. Read then claimed
 * apart, a machine's first ask, and each of its asks again while it waits in line, took three
 * round trips more.
 */
export async function readAndClaimJitMint(
  db: D1Database,
  token: TokenSubject,
  at: number,
  staleBefore: number,
): Promise<{ instance: InstanceWithJitConfig | null; setup: RunnerSetup | null; claimed: boolean }> {
  const [found, setup, claim] = await db.batch<Record<string, any>>([
    findInstanceStatement(db, token.name, { withJitConfig: true }),
    runnerSetupStatement(db, token.scaleSetId, token.name),
    db
      .prepare(
        `UPDATE instances SET jit_claimed_at = ?1, jit_asked_at = ?1, booted_at = coalesce(booted_at, ?1)
          WHERE name = ?2 AND scale_set_id = ?3 AND create_attempt = ?4 AND jit_on_boot = 1 AND jit_config_enc IS NULL
            AND status IN ('creating', 'running') AND runner_status IN ('pending', 'installing')
            AND (jit_claimed_at IS NULL OR coalesce(jit_asked_at, 0) < ?5)`,
      )
      .bind(at, token.name, token.scaleSetId, token.createAttempt, staleBefore),
  ]);
  return {
    instance: instanceFromRow(found!.results[0], { withJitConfig: true }) as InstanceWithJitConfig | null,
    setup: runnerSetupFromRow(token.scaleSetId, setup!.results[0]),
    claimed: Boolean(claim!.meta.changes),
  };
}

/** Claims per statement: two bound values each, within D1's 100 per statement. */
const KEEP_CHUNK = 49;

/**
 * Keeps the claims of many waiting requests (one round trip): the instance ids whose claim is
 * still held and waiting (its machine is asking), now kept; the others were taken over or their
 * instance moved on.
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
 * Stores what the claim made at `claimedAt` minted: the sealed config, GitHub's runner id (so
 * a later removal deletes by an id GitHub gave) and the credential that minted it (the removal
 * goes through it). The bootstrap clock restarts at the mint.
 * Returns false if the claim was lost meanwhile (the instance moved on; its runner is an orphan
 * for the drift check).
 */
export async function storeMintedJit(
  db: D1Database,
  instanceId: string,
  claimedAt: number,
  minted: { jitConfigEnc: string; runnerId: number; credentialId: string },
  at: number,
): Promise<boolean> {
  const stored = await db
    .prepare(
      `UPDATE instances SET jit_config_enc = ?, agent_id = ?, jit_credentials_id = ?, jit_asked_at = ?, updated_at = ?
        WHERE id = ? AND jit_claimed_at = ? AND jit_config_enc IS NULL AND status IN ('creating', 'running')`,
    )
    .bind(minted.jitConfigEnc, minted.runnerId, minted.credentialId, at, at, instanceId, claimedAt)
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
