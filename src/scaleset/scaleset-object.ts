import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

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
   * periodic alarm. Arms the alarm at once unless it is already due, so a burst of nudges
   * costs one reconciliation, not one each. The job is already in D1; a nudge that never
   * arrives only delays the reconciliation until the periodic alarm.
   */
  async nudge(scaleSetId: string, reason: NudgeReason): Promise<void> {
    await this.bind(scaleSetId);
    const now = Date.now();
    await this.ctx.storage.put("last_nudge_at", now);
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm === null || alarm > now) await this.ctx.storage.setAlarm(now);
    console.log(JSON.stringify({ event: "scale_set_nudged", scale_set: scaleSetId, job_id: reason.job_id, status: reason.status }));
  }

  /** Reconciliation lands here with the scale-set issue; until then the alarm only records that it ran. */
  override async alarm(): Promise<void> {
    await this.ctx.storage.put("last_alarm_at", Date.now());
  }
}
