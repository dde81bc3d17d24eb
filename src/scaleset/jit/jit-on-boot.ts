import { keyringFor } from "../../crypto/keyring";
import { seal } from "../../crypto/secret-box";
import { secretContext } from "../../crypto/secret-contexts";
import type { InstanceAttempt } from "../../db/runner/instance-lookups";
import { claimJitMint, keepJitClaims, readJitMint, releaseJitMint, storeMintedJit } from "../../db/runner/jit-mint-store";
import type { RunnerSetup } from "../../db/scaleset/runner-setup-store";
import type { Env } from "../../env";
import type { GithubBudgetPolicy } from "../../github/budget/budget";
import { GithubSendDeadlineError } from "../../github/errors";
import { isDuplicateRunnerName } from "../../github/runners";
import { errorText, logEvent as log, logger } from "../../observability/log";
import type { RunnerPort } from "../ports";
import { githubRunnerPort } from "../ports-factory";
import { scaleSetSettings } from "../settings";
import { JitBudgetLine, type LineTicket } from "./jit-budget-line";
import { reserveFromPool } from "./pool-reservation";

/**
 * A JIT config minted when its machine first asks for it (scale sets with `jit_config_timing:
 * on_boot`): each machine's metadata request is its own Worker invocation, so GitHub's JIT call
 * never waits behind the scale set object's six connections, and the GitHub budget paces
 * machines, not creates. Exactly one mint per create attempt: the request that claims it
 * (jit-mint-store.ts) waits for the credential's budget and calls GitHub; concurrent or
 * retried requests wait for what it sealed. Nothing here answers HTTP: routes/metadata.ts does.
 */

/** How often a request waiting in line for the budget keeps its claim (a claim is stale after OnBootTiming.staleClaimMs). */
const CLAIM_KEEP_MS = 10_000;

/** A paid call must leave this long before its window ends: it still has to reach GitHub. */
const sendMarginMs = (policy: GithubBudgetPolicy) => policy.windowMs / 6;

/** What a credentials request gets. */
export type OnBootJit =
  | { kind: "sealed"; jitConfigEnc: string }
  /** Not now: the budget, or another request's mint, did not finish within the wait. */
  | { kind: "busy"; retryAfterSeconds: number; reason: "github_budget" | "mint_under_way" }
  /** The instance is no longer bootstrapping this create attempt (deleted, recreated, reported in). */
  | { kind: "gone" }
  | { kind: "failed"; reason: string };

export interface OnBootTiming {
  /** How long a request may wait in line (DEFAULT_JIT_WAIT_MS unless JIT_WAIT_SECONDS says). */
  maxWaitMs: number;
  /**
   * A claim its holder has not kept for this long is taken over: the request was cut off. The
   * claim keeps it as it is made, and the line while its request waits (every CLAIM_KEEP_MS);
   * GitHub's call (retries included) must fit in it, or a takeover mints again (see mintReplacingLost).
   */
  staleClaimMs: number;
  /** How often a request waiting on another's claim looks again; and how far past a budget window's start a waiting request tries again (at random). */
  pollMs: number;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
}

/**
 * How long one credentials request waits in line by default. Each wait that ends in a 503 costs
 * the machine another request (and a D1 claim) and costs GARM's templates one of their five
 * retries: at 90 s those six tries cover nine minutes, more than the ~6 minutes a 1,000-job
 * burst on one credential needs. It stays under 100 s, the default timeout of .NET's HttpClient
 * (and of many proxies), so a client that never set one is not cut off mid-wait.
 */
export const DEFAULT_JIT_WAIT_MS = 90_000;

export function onBootTiming(env: Pick<Env, "JIT_WAIT_SECONDS">): OnBootTiming {
  const wait = Number(env.JIT_WAIT_SECONDS);
  const maxWaitMs =
    env.JIT_WAIT_SECONDS !== undefined && env.JIT_WAIT_SECONDS !== "" && Number.isFinite(wait) && wait >= 0
      ? wait * 1000
      : DEFAULT_JIT_WAIT_MS;
  return {
    maxWaitMs,
    staleClaimMs: 45_000,
    pollMs: 1_000,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    now: Date.now,
  };
}

/**
 * The sealed JIT config of an on-boot instance, minting it if nobody has. `firstClaim`: the
 * claim the request already tried with its first read (jit-mint-store's readAndClaimJitMint),
 * its time if it won or null if another holds it; undefined: not tried yet.
 */
export async function onBootJitConfig(
  env: Env,
  inst: InstanceAttempt & { name: string; scaleSetId: string },
  setup: RunnerSetup,
  firstClaim?: number | null,
  timing: OnBootTiming = onBootTiming(env),
): Promise<OnBootJit> {
  const db = env.DB;
  const deadline = timing.now() + timing.maxWaitMs;
  // 1. The claim, or the winner's sealed value.
  let claimedAt: number;
  if (typeof firstClaim === "number") claimedAt = firstClaim;
  else {
    // Lost with the first read: the winner's value is not sealed yet (that read would have seen it).
    if (firstClaim === null) await timing.sleep(timing.pollMs);
    for (;;) {
      const t = timing.now();
      if (await claimJitMint(db, inst, t, t - timing.staleClaimMs)) {
        claimedAt = t;
        break;
      }
      const state = await readJitMint(db, inst);
      if (!state) return { kind: "gone" };
      if (state.jitConfigEnc) return { kind: "sealed", jitConfigEnc: state.jitConfigEnc };
      if (t + timing.pollMs > deadline) return { kind: "busy", retryAfterSeconds: 5, reason: "mint_under_way" };
      await timing.sleep(timing.pollMs);
    }
  }

  // 2. One JIT from the budget of a credential of the entity's pool (each budget shared with every
  // object and isolate), waiting in line; then straight to GitHub with the credential that paid. The call must leave within the window it was paid in, its last
  // sixth (0.5 s of the default 3) counting as over, since it still has to reach GitHub: a call sent
  // later would count at GitHub on top of the next window's own, and the budget's worst minute
  // would no longer hold. The client checks that just before it sends (GithubSendDeadlineError);
  // a call too late is paid again in the next window. The claim was just made (claimJitMint
  // keeps it as it claims); the line keeps it while the request waits.
  const policy = scaleSetSettings(env).githubBudget;
  let minted: { runnerId: number; encodedJitConfig: string };
  // Without a budget (GITHUB_POINTS_PER_MINUTE=0) the entity's own credentials mint.
  let credentialId = setup.entity.credentialsId;
  for (;;) {
    let paidUntil: number | undefined;
    if (policy) {
      const paid = await waitForBudget(db, setup, inst, claimedAt, policy, deadline, timing);
      if (paid === "lost") return { kind: "busy", retryAfterSeconds: 1, reason: "mint_under_way" };
      if ("retryAfterSeconds" in paid) {
        await releaseJitMint(db, inst.id, claimedAt, timing.now());
        return { kind: "busy", retryAfterSeconds: paid.retryAfterSeconds, reason: "github_budget" };
      }
      paidUntil = paid.windowEnd;
      credentialId = paid.credentialId;
    }
    const port = githubRunnerPort(env, { ...setup.entity, credentialsId: credentialId });
    try {
      // 3. The mint, sealed where only this instance's row opens it.
      const sendBy = paidUntil === undefined || !policy ? undefined : paidUntil - sendMarginMs(policy);
      minted = await mintReplacingLost(port, { name: inst.name, labels: setup.labels, runnerGroup: setup.runnerGroup, sendBy });
      break;
    } catch (err) {
      const late = err instanceof GithubSendDeadlineError && paidUntil !== undefined;
      if (late && paidUntil! < deadline) {
        logger.debug({ event: "jit_budget_repaid", scale_set: inst.scaleSetId, instance: inst.name });
        // Paid again in a window that is open and not yet late: the next one.
        await timing.sleep(Math.max(0, paidUntil! - timing.now()));
        continue;
      }
      await releaseJitMint(db, inst.id, claimedAt, timing.now());
      if (late) return { kind: "busy", retryAfterSeconds: 1, reason: "github_budget" };
      return { kind: "failed", reason: errorText(err) };
    }
  }
  const sealed = await seal(await keyringFor(env), minted.encodedJitConfig, secretContext.jitConfig(inst.id));
  if (!(await storeMintedJit(db, inst.id, claimedAt, { jitConfigEnc: sealed, runnerId: minted.runnerId, credentialId }, timing.now()))) {
    // The claim was lost while GitHub answered: the instance moved on (its runner has no live
    // instance, and the drift check removes it), or a takeover's mint replaces this runner.
    log({ event: "jit_claim_lost_after_mint", scale_set: inst.scaleSetId, instance: inst.name, runner_id: minted.runnerId });
    const now = await readJitMint(db, inst);
    if (!now) return { kind: "gone" };
    return now.jitConfigEnc
      ? { kind: "sealed", jitConfigEnc: now.jitConfigEnc }
      : { kind: "busy", retryAfterSeconds: 1, reason: "mint_under_way" };
  }
  log({
    event: "jit_minted_on_boot",
    scale_set: inst.scaleSetId,
    instance: inst.name,
    runner_id: minted.runnerId,
    credential: credentialId,
  });
  return { kind: "sealed", jitConfigEnc: sealed };
}

/**
 * GitHub's JIT call. A 409 (the name is taken) means an earlier claim of ours minted this
 * runner and its config never reached D1 (its request was cut off after GitHub answered): that
 * runner can never start, since GitHub hands a JIT config out only once. It is removed and the
 * runner minted again.
 */
async function mintReplacingLost(
  port: RunnerPort,
  input: { name: string; labels: string[]; runnerGroup: string; sendBy: number | undefined },
): Promise<{ runnerId: number; encodedJitConfig: string }> {
  try {
    return await port.createJitRunner(input);
  } catch (err) {
    if (!isDuplicateRunnerName(err)) throw err;
    const lost = await port.findRunnerByName(input.name);
    if (lost) {
      if (lost.busy) throw err;
      await port.removeRunner(lost.id);
      log({ event: "jit_lost_runner_removed", instance: input.name, runner_id: lost.id });
    }
    return await port.createJitRunner(input);
  }
}

// One line per scale set and credential pool in this isolate (jit-budget-line.ts says why).
type Claim = { instanceId: string; claimedAt: number };
const lines = new Map<string, JitBudgetLine<Claim>>();

function lineFor(
  db: D1Database,
  setup: RunnerSetup,
  scaleSetId: string,
  policy: GithubBudgetPolicy,
  timing: OnBootTiming,
): JitBudgetLine<Claim> {
  const credentialId = setup.entity.credentialsId;
  const pool = setup.pool;
  const key = `${pool.join(",")}|${scaleSetId}|${policy.windowMs}|${policy.pointsPerMinute}`;
  let line = lines.get(key);
  if (!line) {
    line = new JitBudgetLine<Claim>({
      windowMs: policy.windowMs,
      // Still ours, and the machine still asking (its bootstrap clock): a takeover ends a wait.
      keepClaims: async (claims) => {
        const kept = await keepJitClaims(db, claims, timing.now());
        return claims.filter((c) => kept.has(c.instanceId));
      },
      keepEveryMs: CLAIM_KEEP_MS,
      // Waking a thousand waiters costs JavaScript only (one of them asks D1), so they wake close
      // to the window's start: a grant found late is a JIT call sent late.
      spreadMs: 100,
      tailMs: sendMarginMs(policy),
      checkMs: 25,
      stepTimeoutMs: 15_000,
      clock: { now: timing.now, sleep: timing.sleep, random: Math.random },
      reserve: ({ windowStart, wanted, firstAsks }) =>
        reserveFromPool(db, {
          pool,
          // The line asks as its scale set: the fair share between scale sets on a credential
          // holds for on-boot machines too.
          scaleSetId,
          windowStart,
          policy,
          wanted,
          // /metrics' budget waits: each machine that had to wait, once.
          countWaits: firstAsks,
          now: timing.now(),
          // No usable credential in the pool: the entity's own mints, failing or waiting on its own, as before pools.
        }).then((r) => (r.usable ? r.grants : [{ credentialId, count: wanted }])),
      onShort: ({ windowStart, wanted, granted }) =>
        log({
          event: "jit_budget_short",
          scale_set: scaleSetId,
          credential: credentialId,
          pool: pool.length,
          waiting: wanted,
          granted,
          frees_at: new Date(windowStart + policy.windowMs).toISOString(),
        }),
      onError: (err) =>
        logger.warn({ event: "jit_budget_reserve_failed", scale_set: scaleSetId, credential: credentialId, error: errorText(err) }),
    });
    lines.set(key, line);
  }
  return line;
}

/** One JIT config from the line until `deadline`: the window it was paid in, or when to come back. */
async function waitForBudget(
  db: D1Database,
  setup: RunnerSetup,
  inst: { id: string; name: string; scaleSetId: string },
  claimedAt: number,
  policy: GithubBudgetPolicy,
  deadline: number,
  timing: OnBootTiming,
): Promise<LineTicket | "lost" | { retryAfterSeconds: number }> {
  const line = lineFor(db, setup, inst.scaleSetId, policy, timing);
  const result = await line.take(deadline, { instanceId: inst.id, claimedAt });
  return result === "withdrawn" ? "lost" : result;
}
