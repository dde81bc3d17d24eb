import { logEvent as log } from "../observability/log";
import type { FlavorCatalogue } from "../providers/shim-protocol";
import type { MachinePort } from "./ports";

/**
 * A shaped scale set's flavor catalogue, remembered by its object: asked of the shim at most
 * once every 10 minutes (clouds add sizes rarely), so a queued job's path to its create has no
 * catalogue call in it. A failed ask keeps the last good catalogue and asks again after 30 s;
 * with none ever fetched, the scale set's jobs wait (unrefused) until the shim answers.
 */

export const FLAVOR_MEMO_MS = 10 * 60_000;
export const FLAVOR_RETRY_MS = 30_000;

interface Entry {
  key: string;
  catalogue: FlavorCatalogue | null;
  askAt: number;
  asking: Promise<void> | null;
}

export class FlavorMemo {
  private entry: Entry | null = null;

  /**
   * The catalogue for the scale set as `key` describes it (its provider and extra specs: a change
   * of either asks again at once), asking `machines` when due. Null: none has been had yet.
   */
  async get(key: string, machines: Pick<MachinePort, "flavors">, scaleSetId: string, now = Date.now()): Promise<FlavorCatalogue | null> {
    if (this.entry?.key !== key) this.entry = { key, catalogue: null, askAt: now, asking: null };
    const entry = this.entry;
    if (entry.askAt <= now) {
      entry.asking ??= machines.flavors().then((answer) => {
        entry.asking = null;
        if (answer.ok) {
          entry.catalogue = answer.value;
          entry.askAt = Date.now() + FLAVOR_MEMO_MS;
          log({ event: "flavors_fetched", scale_set: scaleSetId, flavors: answer.value.flavors.length });
        } else {
          entry.askAt = Date.now() + FLAVOR_RETRY_MS;
          log({ event: "flavors_unavailable", scale_set: scaleSetId, error: answer.error.message, kept: entry.catalogue !== null });
        }
      });
      await entry.asking;
    }
    return entry.catalogue;
  }

  /** When the object should ask again though nothing else wakes it (null: not waiting on the shim). */
  retryAt(): number | null {
    return this.entry && this.entry.catalogue === null ? this.entry.askAt : null;
  }
}
