import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/** Nudges closer together than this share one reconciliation (see `nudge`). */
export const NUDGE_MIN_INTERVAL_MS = 500;

/** Why an object was nudged; only logged. */
export interface NudgeReason {
  job_id: number;
  status: string;
}

/**
 * One object per scale set: the single writer of its instances' lifecycle. Reconciliation
 * and timers arrive with the scale-set issue; for now it remembers which scale set it is and
 * takes nudges from webhook intake.
 */
export class ScaleSet extends DurableObject<Env> {
  async bind(scaleSetId: string): Promise<string> {
    const known = await this.ctx.storage.get<string>("scale_set_id");
    if (known && known !== scaleSetId) throw new Error(`object belongs to scale set ${known}`);
    if (!known) await this.ctx.storage.put("scale_set_id", scaleSetId);
    return scaleSetId;
  }

  /**
   * Webhook intake wrote a job for this scale set: reconcile now rather than at the next
   * periodic alarm. The alarm is armed at once, or, if one ran less than
   * NUDGE_MIN_INTERVAL_MS ago, that long after it: a burst of deliveries costs a few
   * reconciliations, not one each. An alarm already due no later is left alone; it has not
   * started yet, so it runs after the caller's write and sees the job. The job is in D1
   * before the nudge; a nudge that never arrives only delays it until the periodic alarm.
   *
   * Returns when the alarm is due. Intake skips nudges until then (scaleset/nudge.ts), so
   * an armed alarm must only ever move when it runs: moving it elsewhere delays, but never
   * loses, the jobs whose nudges were skipped.
   */
  async nudge(scaleSetId: string, reason: NudgeReason): Promise<number> {
    await this.bind(scaleSetId);
    const now = Date.now();
    const lastAlarm = (await this.ctx.storage.get<number>("last_alarm_at")) ?? 0;
    const at = Math.max(now, lastAlarm + NUDGE_MIN_INTERVAL_MS);
    const armed = await this.ctx.storage.getAlarm();
    if (armed !== null && armed <= at) return armed;
    // Only a nudge that moves the alarm writes anything.
    await this.ctx.storage.setAlarm(at);
    await this.ctx.storage.put("last_nudge_at", now);
    console.log(JSON.stringify({ event: "scale_set_nudged", scale_set: scaleSetId, job_id: reason.job_id, status: reason.status, alarm_at: at }));
    return at;
  }

  /** Reconciliation lands here with the scale-set issue; until then the alarm only records that it ran. */
  override async alarm(): Promise<void> {
    await this.ctx.storage.put("last_alarm_at", Date.now());
  }
}
