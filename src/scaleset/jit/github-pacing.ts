import { reserveJitConfigs } from "../../db/github-budget-store";
import type { ScaleSetRecord } from "../../db/scaleset-store";
import { budgetWindow, type GithubBudgetPolicy } from "../../github/budget";
import { logEvent as log } from "../../observability/log";
import { mintsJitOnBoot } from "../bootstrap";
import type { BudgetWait, ObjectState } from "../object-state";
import type { Plan } from "../reconcile";
import { capCreates, createCount } from "./budget-cap";

/**
 * Pays for a plan's JIT configs out of the credential's GitHub budget before any row is written:
 * one D1 batch reserves min(wanted, what the window has left, this scale set's fair share when
 * others on the credential are short) for every object on the credential, and the plan is cut to
 * it (budget-cap.ts). Runners the window cannot pay for wait for the next
 * one: the plan wakes when it starts. Only REST JIT configs are budgeted (a registration-token
 * scale set makes no GitHub call per runner here; the scale set API's JIT goes to another service).
 */
export async function payForCreates(input: {
  db: D1Database;
  scaleSet: ScaleSetRecord;
  plan: Plan;
  policy: GithubBudgetPolicy | null;
  state: ObjectState;
  now: number;
}): Promise<Plan> {
  const { scaleSet: ss, plan, policy, state, now } = input;
  const wanted = createCount(plan.actions);
  // On-boot JIT configs are paid for by the metadata route, one machine at a time (jit-on-boot.ts).
  if (!wanted || policy === null || !ss.jitConfigEnabled || ss.intake === "scaleset_api" || mintsJitOnBoot(ss)) return plan;
  const window = budgetWindow(now, policy.windowMs);
  const before = state.budgetWait;
  const firstWaitThisWindow = before?.windowStart !== window.start;
  const reservation = await reserveJitConfigs(input.db, {
    credentialId: ss.entity.credentialsId,
    scaleSetId: ss.id,
    windowStart: window.start,
    policy,
    wanted,
    countWaits: firstWaitThisWindow ? 1 : 0,
    now,
  });
  // A failing or rate-limited credential is not the budget's to pace: its calls fail or wait on their own.
  if (!reservation.usable) return plan;
  const granted = reservation.granted;
  if (granted >= wanted) {
    if (before?.freesAt != null) state.budgetWait = { ...before, freesAt: null, wanted, granted };
    return plan;
  }
  state.budgetWait = { windowStart: window.start, freesAt: window.end, wanted, granted };
  if (firstWaitThisWindow) {
    log({
      event: "github_budget_exhausted",
      scale_set: ss.id,
      credential: ss.entity.credentialsId,
      wanted,
      granted,
      frees_at: new Date(window.end).toISOString(),
    });
  }
  return capCreates(plan, granted, window.end);
}

/** The object status's view of the budget: null until it first cut a plan. */
export interface BudgetStatus {
  /** Whether the last pass that wanted runners got fewer than it wanted. */
  blocked: boolean;
  /** When the window that fell short ends (null: not blocked). */
  frees_at: string | null;
  wanted: number;
  granted: number;
}

export function budgetStatus(wait: BudgetWait | null): BudgetStatus | null {
  if (!wait) return null;
  return {
    blocked: wait.freesAt !== null,
    frees_at: wait.freesAt === null ? null : new Date(wait.freesAt).toISOString(),
    wanted: wait.wanted,
    granted: wait.granted,
  };
}
