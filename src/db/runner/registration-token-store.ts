import type { InstanceAttempt } from "./instance-lookups";

/**
 * D1 access for the registration token of a runner without JIT (GitHub with `jit_config_enabled`
 * off, Gitea's act_runner). A create attempt gets one token: the first request claims it with one
 * conditional UPDATE and mints it, so racing or retried requests never mint a second. The token is
 * sealed into the row before it is answered, so a machine whose answer was lost (a connection cut,
 * the coordinator restarted mid-request) gets the same token when it asks again, rather than a 409
 * that would cost a whole machine. A claim whose request was cut off before it sealed anything is
 * taken over once it is older than `staleBefore`.
 */

/** What a request learnt from its claim: whether it won, and else what the winner left. */
export interface RegistrationTokenClaim {
  claimed: boolean;
  /** The token the winner sealed (null: it is still minting, or was cut off). */
  sealed: string | null;
  /** When the winner claimed it (null: the row is gone, recreated, or registers with JIT). */
  claimedAt: number | null;
}

/** Claims the token of this create attempt, or reads what the claim's winner left; one round trip. */
export async function claimRegistrationToken(
  db: D1Database,
  inst: InstanceAttempt,
  at: number,
  staleBefore: number,
): Promise<RegistrationTokenClaim> {
  const [claim, read] = await db.batch<{ registration_token_enc: string | null; registration_token_served_at: number | null }>([
    db
      .prepare(
        `UPDATE instances SET registration_token_served_at = ?1, registration_token_enc = NULL
          WHERE id = ?2 AND create_attempt = ?3 AND jit_config_enc IS NULL AND jit_on_boot = 0
            AND (registration_token_served_at IS NULL
              OR (registration_token_enc IS NULL AND registration_token_served_at < ?4))`,
      )
      .bind(at, inst.id, inst.createAttempt, staleBefore),
    db
      .prepare(
        `SELECT registration_token_enc, registration_token_served_at FROM instances
          WHERE id = ? AND create_attempt = ? AND jit_config_enc IS NULL AND jit_on_boot = 0`,
      )
      .bind(inst.id, inst.createAttempt),
  ]);
  const row = read!.results[0];
  return {
    claimed: Boolean(claim!.meta.changes),
    sealed: row?.registration_token_enc ?? null,
    claimedAt: row?.registration_token_served_at ?? null,
  };
}

/** Keeps the token a claim made at `claimedAt` minted; false when the claim was taken over meanwhile. */
export async function sealRegistrationToken(db: D1Database, inst: InstanceAttempt, claimedAt: number, sealed: string): Promise<boolean> {
  const res = await db
    .prepare("UPDATE instances SET registration_token_enc = ? WHERE id = ? AND create_attempt = ? AND registration_token_served_at = ?")
    .bind(sealed, inst.id, inst.createAttempt, claimedAt)
    .run();
  return Boolean(res.meta.changes);
}

/** Gives back a claim made at `claimedAt` (the token could not be minted). */
export async function releaseRegistrationToken(db: D1Database, instanceId: string, claimedAt: number): Promise<void> {
  await db
    .prepare(
      "UPDATE instances SET registration_token_served_at = NULL, registration_token_enc = NULL WHERE id = ? AND registration_token_served_at = ?",
    )
    .bind(instanceId, claimedAt)
    .run();
}
