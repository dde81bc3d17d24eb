import { type InstanceStatus, instanceStatuses, type RunnerStatus, runnerStatuses } from "../../db/runner/schema";

/**
 * Who may use an instance token (GARM's rule), in one place for the two that check it: the
 * bootstrap routes' middleware (http/instance-auth.ts), and the scale set object for a status
 * report, which reads the instance in its own serialized turn anyway (so the route does not
 * read it first).
 */

/** Only a runner that is still bootstrapping may use its token. */
const BOOTSTRAPPING_RUNNER: readonly RunnerStatus[] = ["pending", "installing"];
const LIVE_INSTANCE: readonly InstanceStatus[] = ["creating", "running"];

export interface TokenHolder {
  scaleSetId: string;
  createAttempt: number;
  status: InstanceStatus;
  runnerStatus: RunnerStatus;
}

/**
 * Why the instance a token names (`ss`: its scale set, `att`: its create attempt) may not use
 * it, or null when it may. A live instance whose runner has reported in is refused with
 * `runner is <status>` (the routes that serve only the bootstrap tell it 409, not 401).
 */
export function instanceRefusal(row: TokenHolder | null, claims: { ss: string; att: number }): string | null {
  if (!row) return "no such instance";
  if (row.scaleSetId !== claims.ss) return "instance is in another scale set";
  if (row.createAttempt !== claims.att) return "token is for another create attempt";
  if (!LIVE_INSTANCE.includes(row.status)) return `instance is ${row.status}`;
  if (!BOOTSTRAPPING_RUNNER.includes(row.runnerStatus)) return `runner is ${row.runnerStatus}`;
  return null;
}

/** The refusal says the runner has reported in (its token is genuine, its instance live). */
export const reportedIn = (row: TokenHolder | null, refusal: string | null): boolean =>
  row !== null && refusal === `runner is ${row.runnerStatus}`;

/**
 * Every (status, runner status) with which an instance may use the token of these claims, found
 * by asking instanceRefusal itself: for writes that carry the token rule into D1, so that they
 * can go in the same round trip as the read of the row (a status report, system info) while the
 * rule stays stated once, above.
 */
export function usableTokenStates(claims: { ss: string; att: number }): { status: InstanceStatus; runnerStatus: RunnerStatus }[] {
  const states: { status: InstanceStatus; runnerStatus: RunnerStatus }[] = [];
  for (const status of instanceStatuses) {
    for (const runnerStatus of runnerStatuses) {
      if (instanceRefusal({ scaleSetId: claims.ss, createAttempt: claims.att, status, runnerStatus }, claims) === null) {
        states.push({ status, runnerStatus });
      }
    }
  }
  return states;
}
