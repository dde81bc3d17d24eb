import type { InstanceRecord, PoolCredential, ScaleSetRecord } from "../../db/scaleset/snapshot-store";
import { effectivePolicy, type GithubBudgetPolicy, JIT_CONFIG_POINTS, pointsPerWindow } from "../../github/budget/budget";
import { logEvent as log } from "../../observability/log";
import type { CreatePacing, ObjectState } from "../object/object-state";
import type { CreatePacingStatus } from "../object/status-types";
import type { Plan } from "../reconcile";
import { mintsJitOnBoot } from "../runner/bootstrap";
import { capCreates, createCount } from "./budget-cap";
import { bootLead, type MachineBoot, paceCreates, takeBootSamples } from "./create-pacing";

/**
 * The scale set object's side of on-boot create pacing (create-pacing.ts has the rule and why):
 * it learns its machines' boot times from the snapshot, works out what its credential pool mints
 * a minute, and cuts the plan's creates to what can be minted about when the machines will ask.
 * No I/O of its own: the snapshot's rows and the object's state are passed in.
 */

/** Statuses of a machine that may still ask for its runner. */
const MAY_ASK = new Set<string>(["pending_create", "creating", "running"]);
const BOOTSTRAPPING = new Set<string>(["pending", "installing", "unknown"]);

/**
 * How far apart paced passes come, and so how far past the lead a create may be minted: a machine
 * waits up to one step for its config (half of one on average). Half a budget window (1.5 s by
 * default), at least a second: a full window measured 11 % of a 250-job burst's machine time
 * spent waiting; much shorter steps only add passes, each a snapshot read.
 */
export const pacingStepMs = (policy: GithubBudgetPolicy): number => Math.max(1_000, policy.windowMs / 2);

/** What the pool's usable credentials mint a minute under the budget (each its own, learned figure included). */
export function poolJitPerMinute(
  pool: readonly PoolCredential[],
  policy: GithubBudgetPolicy,
  now: number,
): { perMinute: number; usable: number } {
  let perMinute = 0;
  let usable = 0;
  for (const c of pool) {
    if (c.health === "failing" || (c.blockedUntil ?? 0) > now) continue;
    usable++;
    const learned =
      c.learnedPointsPerMinute === null || c.learnedAt === null ? null : { pointsPerMinute: c.learnedPointsPerMinute, at: c.learnedAt };
    const perWindow = Math.floor(pointsPerWindow(effectivePolicy(policy, learned, now)) / JIT_CONFIG_POINTS);
    perMinute += (perWindow * 60_000) / policy.windowMs;
  }
  return { perMinute, usable };
}

export function paceOnBootCreates(input: {
  scaleSet: ScaleSetRecord;
  plan: Plan;
  instances: readonly InstanceRecord[];
  pool: readonly PoolCredential[];
  policy: GithubBudgetPolicy | null;
  state: ObjectState;
  now: number;
}): Plan {
  const { scaleSet: ss, plan, policy, state, now } = input;
  if (!ss.jitConfigEnabled || !mintsJitOnBoot(ss) || policy === null) return plan;

  const boots: MachineBoot[] = input.instances
    .filter((i) => i.bootedAt !== null)
    .map((i) => ({ createdAt: i.createdAt, bootedAt: i.bootedAt }));
  const before = state.bootSamples;
  const samples = takeBootSamples(before, boots);
  if (samples !== before) state.bootSamples = samples;

  const wanted = createCount(plan.actions);
  const last = state.createPacing;
  const wasPacing = last !== null && last.allowed < last.wanted;
  if (!wanted) {
    // Nothing more wanted: the status stops saying creates are held back.
    if (wasPacing) state.createPacing = { ...last, at: now, wanted: 0, allowed: 0, nextCreateAt: null };
    return plan;
  }
  const lead = bootLead(ss.bootTimeSeconds, samples);
  const rate = poolJitPerMinute(input.pool, policy, now);
  const unminted = input.instances
    .filter((i) => i.jitOnBoot && !i.jitMinted && MAY_ASK.has(i.status) && BOOTSTRAPPING.has(i.runnerStatus))
    .map((i) => ({ createdAt: i.createdAt, bootedAt: i.bootedAt }));
  const step = pacingStepMs(policy);
  const decision = paceCreates({ now, unminted, ratePerSecond: rate.perMinute / 60, leadMs: lead.ms, slackMs: step, wanted });
  const nextCreateAt = decision.nextAt === null ? null : Math.max(decision.nextAt, now + step);
  state.createPacing = {
    at: now,
    leadMs: lead.ms,
    leadSource: lead.source,
    bootSamples: lead.samples,
    jitPerMinute: rate.perMinute,
    credentialsUsable: rate.usable,
    credentials: input.pool.length,
    unminted: unminted.length,
    wanted,
    allowed: decision.allowed,
    nextCreateAt,
    lineClearsAt: decision.lineClearsAt,
  };
  if (decision.allowed >= wanted) return plan;
  if (!wasPacing) {
    log({
      event: "creates_paced",
      scale_set: ss.id,
      wanted,
      allowed: decision.allowed,
      unminted: unminted.length,
      lead_ms: lead.ms,
      lead_source: lead.source,
      jit_per_minute: rate.perMinute,
      credentials_usable: rate.usable,
      next_create_at: nextCreateAt === null ? null : new Date(nextCreateAt).toISOString(),
    });
  }
  return capCreates(plan, decision.allowed, nextCreateAt!, "jit_pacing");
}

export function createPacingStatus(p: CreatePacing | null): CreatePacingStatus | null {
  if (!p) return null;
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
  return {
    holding_back: p.allowed < p.wanted,
    wanted: p.wanted,
    allowed: p.allowed,
    next_create_at: iso(p.nextCreateAt),
    unminted: p.unminted,
    line_clears_at: iso(p.lineClearsAt),
    boot_time_ms: p.leadMs,
    boot_time_source: p.leadSource,
    boot_samples: p.bootSamples,
    jit_per_minute: Math.round(p.jitPerMinute * 10) / 10,
    credentials_usable: p.credentialsUsable,
    credentials: p.credentials,
    at: new Date(p.at).toISOString(),
  };
}
