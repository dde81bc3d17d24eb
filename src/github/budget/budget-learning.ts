import { learnFromRefusal } from "../../db/budget/github-budget-store";
import { logEvent } from "../../observability/log";
import type { GithubBudgetPolicy } from "./budget";

/**
 * GitHub refused a call made with `credentialId` with a secondary limit although the budget let
 * it through: the budget was more than GitHub allows this credential, and shrinks (github/budget/budget.ts,
 * learnFromRefusal; the store's statement decides whether this refusal is a new lesson or part of
 * one already learned). Called by the GitHub client where it sees the refusal, before it records
 * the wait. No budget (null): nothing to learn.
 */
export async function learnFromSecondaryLimit(
  d1: D1Database,
  credentialId: string,
  budget: GithubBudgetPolicy | null,
  now: number,
): Promise<void> {
  if (!budget) return;
  const cut = await learnFromRefusal(d1, credentialId, budget, now);
  if (!cut) return;
  logEvent({ event: "github_budget_learned", credential: credentialId, from_points_per_minute: cut.from, to_points_per_minute: cut.to });
}
