import type { ScaleSetRecord } from "../../db/scaleset/snapshot-store";
import { logEvent as log } from "../../observability/log";
import type { ObjectState } from "../object/object-state";
import { type SpendGuard, spendGuard } from "./spend-guard";

/**
 * A pass's spend guard: judged from the scale set's cap and the snapshot's machine time today,
 * kept in the object's state (its status shows it), and `spend_cap_reached` written once, when
 * the guard starts holding: a scale set held for the rest of the day would otherwise say so on
 * every pass.
 */
export function keepSpendGuard(
  state: ObjectState,
  ss: Pick<ScaleSetRecord, "id" | "maxMachineHoursPerDay" | "spendResetAt">,
  machineMsToday: number,
  now: number,
): SpendGuard {
  const guard = spendGuard({ capHours: ss.maxMachineHoursPerDay, usedMs: machineMsToday, resetAt: ss.spendResetAt, now });
  const before = state.spendGuard;
  if (guard.holding && !(before?.holding && before.dayStart === guard.dayStart)) {
    log({
      event: "spend_cap_reached",
      scale_set: ss.id,
      used_machine_hours: Math.round(guard.usedHours * 1000) / 1000,
      cap_machine_hours: guard.capHours,
      resumes_at: new Date(guard.resumesAt).toISOString(),
    });
  }
  if (guard.capHours === null) {
    if (before !== null) state.spendGuard = null;
  } else state.spendGuard = { ...guard, at: now };
  return guard;
}
