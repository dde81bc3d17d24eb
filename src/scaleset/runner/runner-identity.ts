import type { JobStatus } from "../../db/jobs/schema";
import type { RunnerPort, RunnerRemoval } from "../ports";

/**
 * Which GitHub runner belongs to an instance. GitHub's word is the only proof: the id in its JIT
 * answer, or the runner it lists under the instance's name. An id a machine reports is a claim
 * (a machine could name another instance's runner and have the scale set remove it), so it is
 * used only once GitHub shows that runner under this instance's name.
 */

/** What the scale set knows of an instance's runner. */
export interface RunnerIdentity {
  name: string;
  /** GitHub's id: from its JIT answer, or confirmed at GitHub. */
  agentId: number | null;
  /** The id the machine reported, unconfirmed. */
  reportedAgentId: number | null;
  /** The machine fetched a registration token, so it may have registered a runner itself. */
  registrationTokenServed: boolean;
  /** Status of the job the runner took, if it took one (GitHub named it as the job's runner). */
  jobStatus: JobStatus | null;
}

/** How to find the runner to remove (`none`: there is nothing at GitHub for us to remove). */
export type RemovalTarget =
  | { kind: "known"; runnerId: number }
  | { kind: "claimed"; runnerId: number }
  | { kind: "by_name" }
  | { kind: "none" };

export function removalTarget(i: RunnerIdentity): RemovalTarget {
  // Every runner we start is ephemeral (JIT, or config.sh --ephemeral): GitHub unregisters it
  // itself once its one job is done, so a DELETE would only cost a call and answer 404. Should
  // GitHub ever keep one, the drift check removes runners no live instance has.
  if (i.jobStatus === "completed") return { kind: "none" };
  if (i.agentId !== null) return { kind: "known", runnerId: i.agentId };
  if (i.reportedAgentId !== null) return { kind: "claimed", runnerId: i.reportedAgentId };
  // Without a token the machine had no way to register a runner: nothing at GitHub is its own.
  return i.registrationTokenServed ? { kind: "by_name" } : { kind: "none" };
}

/** GitHub runner names are case-insensitive. */
const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * What GitHub's runner under a claimed id says about the claim: it is this instance's runner,
 * GitHub has no runner with that id (gone, or never was), or the runner is someone else's.
 */
export function judgeClaim(instanceName: string, atGithub: { name: string } | null): "confirmed" | "unknown" | "rejected" {
  if (atGithub === null) return "unknown";
  return sameName(atGithub.name, instanceName) ? "confirmed" : "rejected";
}

/**
 * What to record of an id a bootstrapping machine reports: nothing when GitHub already gave the
 * instance its id (a different one is a rejected claim), else the claim, as a claim.
 */
export function claimOnReport(agentId: number | null, reported: number | null): { record: number | null; rejected: boolean } {
  if (reported === null) return { record: null, rejected: false };
  if (agentId !== null) return { record: null, rejected: reported !== agentId };
  return { record: reported, rejected: false };
}

/**
 * claimOnReport decided before the instance is read, for each runner id the instance may hold
 * that it tells apart: none, and the reported one (when nothing is reported it reads no id:
 * `agentId` is then left out). An instance holding any other id, a claim GitHub contradicts, is
 * none of these: its write is decided after the read.
 */
export function claimsInAdvance(reported: number | null): { agentId?: number | null; claim: ReturnType<typeof claimOnReport> }[] {
  // (An RPC caller's absent id is none too: each row must get one change at most.)
  if (reported == null) return [{ claim: claimOnReport(null, null) }];
  return [null, reported].map((agentId) => ({ agentId, claim: claimOnReport(agentId, reported) }));
}

export interface RunnerRemovalOutcome {
  removal: RunnerRemoval;
  /** GitHub's id of the instance's runner when this removal learnt it (to record as confirmed). */
  confirmedId: number | null;
  /** A claimed id GitHub shows under another runner's name: that runner was left alone. */
  rejectedClaim: { runnerId: number; runnerName: string } | null;
}

/**
 * Removes the instance's runner at GitHub, deleting only by an id GitHub itself vouches for.
 * Errors (GitHub unreachable) propagate: the caller decides whether to wait or force.
 */
export async function removeInstanceRunner(
  github: Pick<RunnerPort, "removeRunner" | "getRunner" | "findRunnerByName">,
  i: RunnerIdentity,
): Promise<RunnerRemovalOutcome> {
  const target = removalTarget(i);
  if (target.kind === "none") return { removal: "gone", confirmedId: null, rejectedClaim: null };
  if (target.kind === "known") return { removal: await github.removeRunner(target.runnerId), confirmedId: null, rejectedClaim: null };
  let rejectedClaim: RunnerRemovalOutcome["rejectedClaim"] = null;
  if (target.kind === "claimed") {
    const claimed = await github.getRunner(target.runnerId);
    const verdict = judgeClaim(i.name, claimed);
    if (verdict === "confirmed")
      return { removal: await github.removeRunner(target.runnerId), confirmedId: target.runnerId, rejectedClaim: null };
    if (verdict === "rejected") rejectedClaim = { runnerId: target.runnerId, runnerName: claimed!.name };
  }
  // The claim did not hold (or there was none): the instance's runner, if any, is the one with its name.
  const own = await github.findRunnerByName(i.name);
  if (own === null) return { removal: "gone", confirmedId: null, rejectedClaim };
  return { removal: await github.removeRunner(own.id), confirmedId: own.id, rejectedClaim };
}
