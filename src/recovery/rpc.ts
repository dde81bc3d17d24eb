import { countedStub, type InvocationCost } from "../lib/invocation-cost";
import type { PassReport } from "./recovery-pass";

/**
 * What the rest of the Worker may ask of the delivery recovery object (recovery-object.ts), so
 * that env.ts types the binding without importing the class.
 */
export interface DeliveryRecoveryRpc extends Rpc.DurableObjectBranded {
  /** Makes sure a pass is scheduled (the alarm armed); cheap, idempotent. */
  poke(): Promise<void>;
  /** Runs a pass now (or waits for the one under way) and says what it did. */
  runNow(): Promise<PassReport & { cost: InvocationCost }>;
  /** When the next pass is due (null: none scheduled). */
  nextPassAt(): Promise<number | null>;
}

/** The one recovery object of this coordinator. */
export function recoveryObject(env: { DELIVERY_RECOVERY: DurableObjectNamespace<DeliveryRecoveryRpc> }) {
  return countedStub(env.DELIVERY_RECOVERY.get(env.DELIVERY_RECOVERY.idFromName("delivery-recovery")));
}
