import { type EndpointRow, knownGuids, loadRecoveryInputs, type RecoveryRow, savePass, type WatchRow } from "../db/recovery/recovery-store";
import type { Env } from "../env";
import { clientPool } from "../github/client-pool";
import { GithubClient } from "../github/github-client";
import { type DeliverySource, getDelivery } from "../github/hook-deliveries";
import { ingestRecoveredDelivery, type RecoveredVia } from "../intake/recovered-delivery";
import { originOfEndpoint } from "../intake/senders";
import { mapLimit } from "../lib/map-limit";
import { webhookUrlFor } from "../lib/webhook-url";
import { errorText, logEvent as log, logAt } from "../observability/log";
import { count, counterName, counterRoom, drainCounterStatements, USAGE_FLUSH_MS } from "../observability/op-counters";

/** When this isolate's passes last carried the pending counts (see runRecoveryPass). */
let countersDrainedAt = 0;

import { BACKSTOP_FOUND_COUNTER, RECOVERED_COUNTER } from "../observability/recovery-metrics";
import { nudgeScaleSet } from "../scaleset/stub";
import { type Candidate, candidates, type ListedDelivery } from "./delivery-walk";
import { forgeBackstopPort } from "./forge-backstop";
import { type HookWalkOutput, walkHook } from "./hook-walk";
import { nextPass, type PassTrouble, worstTrouble } from "./pass-timing";
import { runBackstop } from "./recovery-backstop";
import type { PassReport } from "./rpc";
import { servedEntities } from "./served";
import { githubRetentionMs, type RecoverySettings } from "./settings";
import { type HookWatch, watchList } from "./watch-list";
import { CallBudget, watchProblem } from "./watch-status";

// No waiting inside a call: a rate-limited credential is skipped and tried next pass.
const clientFor = clientPool(
  (env, credentialId) => new GithubClient({ env, credentialId, maxWaitMs: 0, maxAttempts: 2, timeoutMs: 15_000 }),
);

/** A row worth writing: anything but `updatedAt` differs. */
const changed = (before: WatchRow | undefined, after: WatchRow) => JSON.stringify(before ?? null) !== JSON.stringify(after);

/**
 * One pass of delivery recovery (the recovery object's alarm runs it; docs/github.md "Lost
 * deliveries"): read what is registered and what the watches know (one D1 round trip), walk each
 * hook's failed deliveries, ask D1 which of their GUIDs it knows (one round trip), fetch back and
 * take in the rest, run the backstop for the entities whose deliveries cannot be read, and write
 * what changed (one batch). A pass that finds no failure makes one list call per hook and writes
 * nothing but its own record, at most every LAST_PASS_REFRESH_MS.
 */
export async function runRecoveryPass(env: Env, settings: RecoverySettings, now = Date.now(), troubleStreak = 0): Promise<PassReport> {
  const started = Date.now();
  const inputs = await loadRecoveryInputs(env.DB, now);
  const rows = new Map(inputs.watches.map((w) => [w.key, w]));
  const endpoints = new Map(inputs.endpoints.map((e) => [e.name, e]));
  const entities = new Map(inputs.entities.map((e) => [e.id, e]));
  const list = watchList(
    servedEntities(inputs.entities),
    new Map(inputs.watches.map((w) => [w.key, { status: w.status, detail: w.detail }])),
  );
  const budget = new CallBudget(settings.callsPerCredential);
  const webhookUrl = webhookUrlFor(env.PUBLIC_URL);
  /** The oldest a delivery of this endpoint may be to be taken in: GitHub's keeping, or our delivery ids', whichever is shorter. */
  const maxAgeOf = (endpointName: string) =>
    Math.min(githubRetentionMs(endpoints.get(endpointName)?.apiBaseUrl ?? ""), settings.deliveryRetentionMs);
  const nextRows = new Map<string, WatchRow>();
  // Scale sets that may have missed a job's nudge (a quiet one would find it only at its next tick).
  const nudges = new Set<string>(inputs.unnudged);
  if (inputs.unnudged.length)
    log({ event: "scale_sets_renudged", scale_sets: inputs.unnudged, reason: "a job queued over a minute ago, no machine" });
  const troubles: (PassTrouble | null)[] = [];

  // 1. Each hook's failed deliveries.
  const walks = await mapLimit(list.hooks, settings.concurrency, async (watch): Promise<[HookWatch, HookWalkOutput]> => {
    const entity = watch.entityId ? entities.get(watch.entityId) : null;
    const out = await walkHook({
      watch,
      row: rows.get(watch.key) ?? null,
      scope: entity
        ? entity.kind === "repository"
          ? { kind: "repository", owner: entity.owner, repo: entity.name }
          : { kind: "organization", org: entity.owner }
        : null,
      gh: clientFor(env, watch.credentialsId),
      budget,
      settings,
      walk: { ...settings.walk, maxAgeMs: maxAgeOf(watch.endpointName) },
      webhookUrl,
      now,
    });
    return [watch, out];
  });

  // 2. Which of the failures are new: one round trip for every GUID listed.
  const seenFailures: { watch: HookWatch; source: DeliverySource; c: Candidate }[] = [];
  for (const [watch, out] of walks) {
    nextRows.set(watch.key, out.row);
    troubles.push(out.trouble ?? null);
    if (out.source)
      for (const c of candidates(out.listed, now, { ...settings.walk, maxAgeMs: maxAgeOf(watch.endpointName) }))
        seenFailures.push({ watch, source: out.source, c });
  }
  const known = await knownGuids(
    env.DB,
    seenFailures.map((f) => f.c.guid),
  );
  const recoveries = new Map<string, RecoveryRow>();
  const entityOf = (watch: HookWatch) => watch.entityId ?? (watch.entities.length === 1 ? watch.entities[0]! : null);
  for (const { watch, c } of seenFailures) {
    if (known.seen.has(c.guid) || recoveries.has(c.guid)) continue;
    const outcome = known.stored.has(c.guid) ? "already_recorded" : c.verdict === "take" ? "pending" : c.verdict;
    recoveries.set(c.guid, failureRow(watch.key, entityOf(watch), c, outcome, now));
  }
  const newFailures = recoveries.size;

  // 3. Fetch back and take in what is pending: new ones and earlier ones not done yet, oldest first.
  const watchByKey = new Map(list.hooks.map((h) => [h.key, h]));
  const sourceOf = new Map(walks.filter(([, o]) => o.source).map(([w, o]) => [w.key, o.source!]));
  // Earlier ones whose hook is no longer watched (its entity went), or that aged past what GitHub
  // and our delivery ids keep, are closed rather than carried on.
  for (const p of inputs.pending) {
    if (recoveries.has(p.key)) continue;
    const watch = watchByKey.get(p.watchKey);
    if (!watch) recoveries.set(p.key, { ...p, outcome: "ignored", detail: "its hook is no longer watched" });
    else if (p.deliveredAt !== null && now - p.deliveredAt > maxAgeOf(watch.endpointName))
      recoveries.set(p.key, { ...p, outcome: "too_old", detail: null });
  }
  const pending = [
    ...inputs.pending.filter((p) => !recoveries.has(p.key)),
    ...[...recoveries.values()].filter((r) => r.outcome === "pending"),
  ]
    .filter((p) => watchByKey.has(p.watchKey))
    .sort((a, b) => (a.deliveredAt ?? 0) - (b.deliveredAt ?? 0));
  const fetchNow = pending.slice(0, settings.fetchesPerPass);
  let recovered = 0;
  // A few at a time, oldest first (intake's merge makes the order of a job's events not matter).
  const fetched = await mapLimit(fetchNow, settings.concurrency, async (p) => {
    const watch = watchByKey.get(p.watchKey)!;
    const source = sourceOf.get(watch.key) ?? sourceFromRow(nextRows.get(watch.key), entities.get(watch.entityId ?? ""));
    const endpoint = endpoints.get(watch.endpointName);
    if (!source || !endpoint || p.githubId === null) return null;
    return fetchAndIngest(env, { watch, source, endpoint, pending: p, budget, settings, now });
  });
  for (const row of fetched) {
    if (!row) continue;
    troubles.push(row.trouble);
    recoveries.set(row.row.key, row.row);
    for (const s of row.nudge) nudges.add(s);
    if (row.row.outcome === "recovered") recovered++;
  }

  // 4. The backstop, for entities whose deliveries cannot be read back.
  let backstopFound = 0;
  for (const watch of list.backstops) {
    const entity = entities.get(watch.entityId)!;
    const endpoint = endpoints.get(watch.endpointName);
    if (!endpoint) continue;
    const port = forgeBackstopPort(endpoint, clientFor(env, watch.credentialsId), budget, watch.credentialsId);
    const result = await runBackstop(env, {
      watch,
      row: rows.get(watch.key) ?? null,
      entity: { ...entity, forge: endpoint.forge },
      origin: originOfEndpoint(endpoint),
      port,
      settings,
      now,
    });
    nextRows.set(watch.key, result.row);
    troubles.push(result.trouble);
    for (const f of result.found) recoveries.set(f.key, f);
    for (const s of result.nudge) nudges.add(s);
    backstopFound += result.found.length;
    if (result.found.length) count(counterName(BACKSTOP_FOUND_COUNTER, entity.kind), result.found.length);
  }

  // 5. Problems that start or end are said once; then everything that changed is written.
  for (const [key, after] of nextRows) {
    const before = rows.get(key);
    if ((before?.status ?? "ok") !== after.status) {
      logAt(after.status === "ok" ? "info" : "warn", {
        event: after.status === "ok" ? "delivery_watch_ok" : "delivery_watch_problem",
        watch: key,
        entity: after.entityId,
        status: after.status,
        detail: after.detail,
      });
    }
  }
  const wanted = new Set(nextRows.keys());
  const durationMs = Date.now() - started;
  // More to do soon: fetches this pass had no room or no share of calls for. Those GitHub failed
  // come back with the trouble's backoff.
  const more =
    pending.length > fetchNow.length || [...recoveries.values()].some((r) => r.outcome === "pending" && r.detail?.startsWith("budget:"));
  const next = nextPass({ now: Date.now(), intervalMs: settings.intervalMs, more, trouble: worstTrouble(troubles), troubleStreak });
  const nextAt = next.at;
  await Promise.all([...nudges].map((s) => nudgeScaleSet(env, s)));
  // The isolate's counts ride along at most every few minutes: each is a billed row written, and
  // a quiet pass every minute would otherwise write them all every minute.
  const countersDue = now - countersDrainedAt >= USAGE_FLUSH_MS;
  // Within what the invocation has left (the Free plan's 50 D1 queries): savePass writes up to five of its own.
  const counters = countersDue ? drainCounterStatements(env.DB, now, counterRoom(5)) : { statements: [], restore: () => {} };
  if (countersDue) countersDrainedAt = now;
  try {
    await savePass(
      env.DB,
      {
        watches: [...nextRows.values()].filter((r) => changed(rows.get(r.key), r)),
        dropWatches: inputs.watches.filter((w) => !wanted.has(w.key)).map((w) => w.key),
        recoveries: [...recoveries.values()],
        lastPass: { at: now, durationMs, calls: budget.total, watches: nextRows.size, nextAt },
        alongside: counters.statements,
      },
      now,
    );
  } catch (err) {
    counters.restore();
    throw err;
  }
  logAt(newFailures || recovered || backstopFound ? "info" : "debug", {
    event: "delivery_recovery_pass",
    watches: nextRows.size,
    calls: budget.total,
    new_failures: newFailures,
    recovered,
    backstop_found: backstopFound,
    duration_ms: durationMs,
  });
  return {
    at: now,
    durationMs,
    calls: budget.total,
    watches: nextRows.size,
    newFailures,
    recovered,
    backstopFound,
    more,
    nextAt,
    troubleStreak: next.troubleStreak,
  };
}

function failureRow(
  watchKey: string,
  entityId: string | null,
  c: ListedDelivery,
  outcome: RecoveryRow["outcome"],
  now: number,
): RecoveryRow {
  return {
    key: c.guid,
    watchKey,
    entityId,
    means: "ingest",
    githubId: c.id,
    event: c.event,
    action: c.action,
    deliveredAt: c.deliveredAt,
    statusCode: c.statusCode,
    seenAt: now,
    outcome,
    detail: null,
    jobId: null,
    attempts: 0,
  };
}

/** A pending delivery's hook when this pass did not walk it (its walk failed): the hook the row last found. */
function sourceFromRow(
  row: WatchRow | undefined,
  entity: { kind: string; owner: string; name: string } | undefined,
): DeliverySource | null {
  if (!row) return null;
  if (row.kind === "app") return { kind: "app" };
  if (row.hookId === null || !entity) return null;
  return {
    kind: "hook",
    hookId: row.hookId,
    scope:
      entity.kind === "repository"
        ? { kind: "repository", owner: entity.owner, repo: entity.name }
        : { kind: "organization", org: entity.owner },
  };
}

/** Fetches one failed delivery's payload from GitHub and takes it in; what became of it. */
async function fetchAndIngest(
  env: Env,
  p: {
    watch: HookWatch;
    source: DeliverySource;
    endpoint: EndpointRow;
    pending: RecoveryRow;
    budget: CallBudget;
    settings: RecoverySettings;
    now: number;
  },
): Promise<{ row: RecoveryRow; nudge: string[]; trouble: PassTrouble | null }> {
  const { watch, pending } = p;
  const via: RecoveredVia =
    watch.kind === "app" ? { kind: "app_hook", appId: watch.appId! } : { kind: "entity_hook", entityId: watch.entityId! };
  try {
    p.budget.take(watch.credentialsId);
    const detail = await getDelivery(clientFor(env, watch.credentialsId), p.source, pending.githubId!);
    if (detail.guid !== pending.key) throw new Error(`GitHub answered delivery ${detail.guid} for ${pending.key}`);
    const outcome = await ingestRecoveredDelivery(env, {
      guid: detail.guid,
      event: detail.event,
      json: detail.request?.payload ?? null,
      endpoint: p.endpoint,
      via,
      receivedAt: Date.now(),
      retentionDays: p.settings.retentionDays,
    });
    const done = (o: RecoveryRow["outcome"], why: string | null, jobId: number | null = null, entityId = pending.entityId) => ({
      ...pending,
      outcome: o,
      detail: why,
      jobId,
      entityId,
    });
    switch (outcome.kind) {
      case "accepted":
      case "installation": {
        count(counterName(RECOVERED_COUNTER, watch.kind, "ingest"));
        const jobId = outcome.kind === "accepted" ? outcome.jobId : null;
        log({
          event: "delivery_recovered",
          means: "ingest",
          watch: watch.key,
          entity: outcome.kind === "accepted" ? outcome.entityId : pending.entityId,
          delivery_id: detail.guid,
          github_event: detail.event,
          action: detail.action,
          job_id: jobId,
          answered_status: pending.statusCode,
          delivered_at: pending.deliveredAt === null ? null : new Date(pending.deliveredAt).toISOString(),
          ...(outcome.kind === "accepted" && { scale_set: outcome.scaleSetId }),
        });
        const entityId = outcome.kind === "accepted" ? outcome.entityId : pending.entityId;
        return { row: done("recovered", null, jobId, entityId), nudge: outcome.kind === "accepted" ? outcome.nudge : [], trouble: null };
      }
      case "duplicate":
        return { row: done("already_recorded", null, outcome.jobId), nudge: [], trouble: null };
      case "rejected":
        return { row: done("refused", outcome.reason), nudge: [], trouble: null };
      default:
        return { row: done("ignored", outcome.kind === "ignored" ? outcome.reason : outcome.kind), nudge: [], trouble: null };
    }
  } catch (err) {
    const problem = watchProblem(err);
    // Only an answer about the delivery itself counts against it (GitHub does not show it, or its
    // payload will not do): the pass's share of calls running out, GitHub being down or rate
    // limited, or the credentials failing say nothing of it, and it waits as long as it may.
    const own = problem.status === "not_found" || problem.status === "forbidden" || problem.status === "error";
    const attempts = own ? pending.attempts + 1 : pending.attempts;
    const giveUp = attempts >= p.settings.maxFetchAttempts;
    if (problem.status !== "budget")
      log({ event: "delivery_recovery_failed", watch: watch.key, delivery_id: pending.key, attempts, error: errorText(err) });
    return {
      row: { ...pending, attempts, outcome: giveUp ? "refused" : "pending", detail: `${problem.status}: ${problem.detail}`.slice(0, 500) },
      nudge: [],
      trouble: giveUp ? null : problem.trouble,
    };
  }
}
