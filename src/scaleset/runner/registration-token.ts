import type { RegistrationTokenClaim } from "../../db/runner/registration-token-store";

/**
 * What the registration-token route does with a request, given its claim (runners without JIT).
 * One token per create attempt: the claim's winner mints it; a later request of the same machine
 * (its answer was lost, curl retried) gets the token the winner sealed, so a cut connection does
 * not cost a machine.
 */

/** A claim not sealed within this time was cut off (the request died mid-mint); another request takes it over. */
export const REGISTRATION_TOKEN_MINT_STALE_MS = 30_000;
/**
 * The sealed token is served again only this soon after it was minted: long enough for a machine's
 * retries across a coordinator restart, short enough that the token cannot be had again later
 * (a registration token registers any number of runners for an hour). The instance token also
 * closes once the runner reports idle.
 */
export const REGISTRATION_TOKEN_REISSUE_MS = 2 * 60_000;

export type RegistrationTokenStep =
  | { kind: "mint" }
  | { kind: "again" }
  | { kind: "wait"; retryAfterSeconds: number }
  | { kind: "refuse"; reason: "expired" | "gone" };

export function registrationTokenStep(claim: RegistrationTokenClaim, now: number): RegistrationTokenStep {
  if (claim.claimed) return { kind: "mint" };
  if (claim.claimedAt === null) return { kind: "refuse", reason: "gone" };
  if (claim.sealed !== null)
    return now - claim.claimedAt < REGISTRATION_TOKEN_REISSUE_MS ? { kind: "again" } : { kind: "refuse", reason: "expired" };
  // The winner is still minting; it is usually done within a second.
  return { kind: "wait", retryAfterSeconds: 1 };
}
