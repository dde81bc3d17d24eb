import { DurableObject } from "cloudflare:workers";
import { measuredD1 } from "../db/counting-d1";
import type { Env } from "../env";
import { type InvocationCost, invocationBudget, measure, noCost, usePlan } from "../lib/invocation-cost";
import { recordInvocation } from "../lib/invocation-ledger";
import { meterStorageRows } from "../lib/metered-sql";
import { tally } from "../lib/usage-tally";
import { errorText, logEvent as log } from "../observability/log";
import { runRecoveryPass } from "./recovery-pass";
import type { DeliveryRecoveryRpc, PassReport } from "./rpc";
import { type RecoverySettings, recoverySettings } from "./settings";

const TROUBLE_STREAK = "troubleStreak";
/** What this object's work is tallied as (lib/usage-tally.ts). */
const KIND = "delivery_recovery";

/** One billed Durable Object request: counted, with its active time and what it spends. */
function invocation<R>(fn: () => Promise<R>): Promise<R> {
  tally("do_requests", KIND);
  const started = Date.now();
  const cost = noCost();
  recordInvocation(KIND, cost);
  return measure(cost, fn, KIND).finally(() => tally("do_active_ms", KIND, Date.now() - started));
}

/**
 * Delivery recovery's one Durable Object: its alarm runs a pass (recovery-pass.ts) every
 * DELIVERY_RECOVERY_SECONDS (sooner after trouble or with work left: pass-timing.ts) and re-arms
 * itself, whatever the pass did. An alarm rather than a Cron
 * Trigger because it also runs under `wrangler dev` (Cron Triggers fire only when deployed), so
 * `npm run dev` and the end-to-end tests recover deliveries as production does, and because it can
 * come back sooner when a pass had more to do. Its state lives in D1 (the dashboard and the setup
 * check read it there); the object keeps nothing but its alarm.
 */
export class DeliveryRecovery extends DurableObject<Env> implements DeliveryRecoveryRpc {
  private readonly settings: RecoverySettings;
  private running: Promise<PassReport & { cost: InvocationCost }> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    const db = measuredD1(env.DB);
    super(ctx, new Proxy(env, { get: (target, prop, receiver) => (prop === "DB" ? db : Reflect.get(target, prop, receiver)) }));
    this.settings = recoverySettings(env);
    usePlan(env.CLOUDFLARE_PLAN);
  }

  poke(): Promise<void> {
    return invocation(async () => {
      if (this.settings.intervalMs === 0) return;
      if ((await this.ctx.storage.getAlarm()) === null) await this.setAlarm(Date.now() + this.settings.intervalMs);
    });
  }

  nextPassAt(): Promise<number | null> {
    return invocation(() => this.ctx.storage.getAlarm());
  }

  runNow(): Promise<PassReport & { cost: InvocationCost }> {
    return invocation(() => this.runPass());
  }

  private async setAlarm(at: number): Promise<void> {
    await this.ctx.storage.setAlarm(at);
    meterStorageRows(0, 1);
  }

  private runPass(): Promise<PassReport & { cost: InvocationCost }> {
    if (!this.running) {
      const cost = noCost();
      this.running = measure(cost, async () => {
        // Passes in a row that met trouble at GitHub: kept so the retries back off (pass-timing.ts).
        const streak = (await this.ctx.storage.get<number>(TROUBLE_STREAK)) ?? 0;
        meterStorageRows(1, 0);
        const report = await runRecoveryPass(this.env, this.settings, Date.now(), streak);
        if (report.troubleStreak !== streak) {
          await this.ctx.storage.put(TROUBLE_STREAK, report.troubleStreak);
          meterStorageRows(0, 1);
        }
        return report;
      })
        .then((report) => {
          const budget = invocationBudget();
          if (cost.subrequests > budget.subrequests / 2 || cost.d1Queries > budget.d1Queries / 2)
            log({ event: "invocation_cost_high", object: "delivery_recovery", ...cost });
          return { ...report, cost };
        })
        .finally(() => {
          this.running = null;
        });
    }
    return this.running;
  }

  override alarm(): Promise<void> {
    return invocation(() => this.onAlarm());
  }

  private async onAlarm(): Promise<void> {
    if (this.settings.intervalMs === 0) return;
    let next = Date.now() + this.settings.intervalMs;
    try {
      next = (await this.runPass()).nextAt;
    } catch (err) {
      log({ event: "delivery_recovery_failed", error: errorText(err) });
    } finally {
      // Re-armed whatever happened: a pass that threw is not retried by the platform's backoff
      // (which gives up after six tries), it simply comes again at the next interval.
      await this.setAlarm(next);
    }
  }
}
