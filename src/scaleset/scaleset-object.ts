import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { ShimCallback } from "../providers/shim-protocol";

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

  // PLACEHOLDER (issue 5, shim side): only records the callback so the route can be tested.
  // The lead's reconciliation replaces this with matching the operation and applying the result.
  async providerCallback(cb: ShimCallback): Promise<{ accepted: boolean }> {
    await this.ctx.storage.put("last_callback", cb);
    return { accepted: true };
  }
}
