import { countedStub, type InvocationCost } from "../lib/invocation-cost";

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

/** What one pass did (recovery-pass.ts); declared here, beside the RPC that answers with it, so that env.ts reaches no pass code. */
export interface PassReport {
  at: number;
  durationMs: number;
  calls: number;
  watches: number;
  /** Failed deliveries listed that were new to us. */
  newFailures: number;
  recovered: number;
  backstopFound: number;
  /** Work left for the next pass (pending fetches beyond this pass's cap). */
  more: boolean;
  /** When the next pass is due (pass-timing.ts): the interval on, sooner when work was left or GitHub had passing trouble. */
  nextAt: number;
  /** Passes in a row that met passing trouble at GitHub, this one included (what the object hands the next pass). */
  troubleStreak: number;
}

/** The one recovery object of this coordinator. */
export function recoveryObject(env: { DELIVERY_RECOVERY: DurableObjectNamespace<DeliveryRecoveryRpc> }) {
  return countedStub(env.DELIVERY_RECOVERY.get(env.DELIVERY_RECOVERY.idFromName("delivery-recovery")));
}
