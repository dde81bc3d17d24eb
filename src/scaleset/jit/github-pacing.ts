import type { InstanceRecord, PoolCredential, ScaleSetRecord } from "../../db/scaleset/snapshot-store";
import { budgetWindow, type GithubBudgetPolicy } from "../../github/budget/budget";
import { logEvent as log } from "../../observability/log";
import type { BudgetWait, ObjectState } from "../object/object-state";
import type { BudgetStatus } from "../object/status-types";
import type { Plan } from "../reconcile";
import { mintsJitOnBoot } from "../runner/bootstrap";
import { capCreates, createCount } from "./budget-cap";
import { paceOnBootCreates } from "./on-boot-pacing";
import { reserveFromPool } from "./pool-reservation";

/**
 * Fits a plan's creates to the GitHub budget. On-boot JIT configs are minted when the machines
 * ask, paid for by the metadata route one machine at a time (jit-on-boot.ts): their creates are
 * paced so that machines do not boot long before the budget can mint for them (on-boot-pacing.ts).
 * A JIT config minted in the pass (before_create) is paid here, before any row is written:
 * one D1 batch reserves min(wanted, what the window has left, this scale set's fair share when
 * others on the credential are short) for every object on the credential, and the plan is cut to
 * it (budget-cap.ts). Runners the window cannot pay for wait for the next
 * one: the plan wakes when it starts. Only REST JIT configs are budgeted (a registration-token
 * scale set makes no GitHub call per runner here; the scale set API's JIT goes to another service).
 */
export async function payForCreates(
  input: {
    db: D1Database;
    scaleSet: ScaleSetRecord;
    plan: Plan;
    state: ObjectState;
    now: number;
    /** The snapshot's instances (on-boot pacing) and credential pool. */
    instances: readonly InstanceRecord[];
    pool: readonly PoolCredential[];
  },
  policy: GithubBudgetPolicy | null,
): Promise<Plan> {
  const { scaleSet: ss, plan, state, now } = input;
  if (mintsJitOnBoot(ss)) return paceOnBootCreates({ ...input, policy });
  const wanted = createCount(plan.actions);
  if (!wanted || policy === null || !ss.jitConfigEnabled || ss.intake === "scaleset_api") return plan;
  const window = budgetWindow(now, policy.windowMs);
  const before = state.budgetWait;
  const firstWaitThisWindow = before?.windowStart !== window.start;
  // The entity's own credential first, then the others of its pool, each within its own budget.
  const reservation = await reserveFromPool(input.db, {
    pool: input.pool.map((c) => c.credentialId),
    scaleSetId: ss.id,
    windowStart: window.start,
    policy,
    wanted,
    countWaits: firstWaitThisWindow ? 1 : 0,
    now,
  });
  // No usable credential in the pool is not the budget's to pace: its calls fail or wait on their own.
  if (!reservation.usable) return plan;
  const granted = reservation.grants.reduce((n, g) => n + g.count, 0);
  const mintWith = reservation.grants.flatMap((g) => Array.from({ length: g.count }, () => g.credentialId));
  if (granted >= wanted) {
    if (before?.freesAt != null) state.budgetWait = { ...before, freesAt: null, wanted, granted };
    return { ...plan, mintWith };
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
  return { ...capCreates(plan, granted, window.end), mintWith };
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
