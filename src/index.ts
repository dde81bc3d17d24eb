import { createApp } from "./app";
import { measuredD1 } from "./db/counting-d1";
import type { Env } from "./env";
import { requestKind } from "./http/request-kind";
import { invocationBudget, measure, noCost, usePlan } from "./lib/invocation-cost";
import { recordInvocation } from "./lib/invocation-ledger";
import { tally } from "./lib/usage-tally";
import { logger } from "./observability/log";
import { flushUsage } from "./observability/op-counters";
import { pokeRecovery } from "./recovery/poke";
import { runRetention } from "./retention/run-retention";

export { DeliveryRecovery } from "./recovery/recovery-object";
export { ScaleSet } from "./scaleset/scaleset-object";

const app = createApp();

/**
 * One Worker request is one invocation with its own budgets (lib/invocation-cost.ts): its D1
 * calls and outbound fetches are counted, and one that draws on more than half of a budget is
 * logged. The routes make a fixed number of calls each; this is the alarm bell if one stops.
 */
async function measuredFetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  usePlan(env.CLOUDFLARE_PLAN);
  const db = measuredD1(env.DB);
  const measuredEnv = new Proxy(env, { get: (target, prop, receiver) => (prop === "DB" ? db : Reflect.get(target, prop, receiver)) });
  const cost = noCost();
  // Each request is one billed Worker request, tallied with what it spends as its kind's.
  const kind = requestKind(new URL(request.url).pathname);
  tally("worker_requests", kind);
  recordInvocation(kind, cost);
  const res = await measure(cost, () => app.fetch(request, measuredEnv, ctx), kind);
  const budget = invocationBudget();
  if (cost.subrequests > budget.subrequests / 2 || cost.d1Queries > budget.d1Queries / 2) {
    logger.warn({ event: "invocation_cost_high", method: request.method, path: new URL(request.url).pathname, ...cost });
  }
  return res;
}

export default {
  fetch: measuredFetch,
  // The Cron Trigger (wrangler.toml `[triggers]`): retention, see docs/retention.md.
  scheduled: async (controller, env) => {
    usePlan(env.CLOUDFLARE_PLAN);
    tally("worker_requests", "retention");
    const db = measuredD1(env.DB);
    const cost = noCost();
    recordInvocation("retention", cost);
    await measure(
      cost,
      async () => {
        // The hourly trigger also makes sure delivery recovery is scheduled (its alarm re-arms itself; this is the safety net).
        await Promise.all([runRetention(db, env, controller.scheduledTime), pokeRecovery(env)]);
        // What retention spent goes to D1 now: nothing else may write from this isolate for a while.
        await flushUsage(db);
      },
      "retention",
    );
  },
} satisfies ExportedHandler<Env>;
