import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/**
 * One object per scale set: the single writer of its instances' lifecycle. Reconciliation
 * and timers arrive with the scale-set issue; for now it only remembers which scale set it is.
 */
export class ScaleSet extends DurableObject<Env> {
  async bind(scaleSetId: string): Promise<string> {
    const known = await this.ctx.storage.get<string>("scale_set_id");
    if (known && known !== scaleSetId) throw new Error(`object belongs to scale set ${known}`);
    if (!known) await this.ctx.storage.put("scale_set_id", scaleSetId);
    return scaleSetId;
  }
}
