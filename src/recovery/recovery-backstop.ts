import { backstopView, type RecoveryEntityRow, type RecoveryRow, type WatchRow } from "../db/recovery/recovery-store";
import type { Env } from "../env";
import { entityLookupKey } from "../github/entity-names";
import { acceptWorkflowJob } from "../intake/accept-job";
import { type Directory, loadDirectory } from "../intake/directory";
import { DeliverySubject } from "../intake/payload";
import { type DeliveryOrigin, deliveryEntities, type EntityRef } from "../intake/senders";
import { logEvent as log } from "../observability/log";
import { asPayload, backstopDeliveryId, type ForgeJob, planBackstop, type RepoListing, reposThisPass } from "./backstop";
import type { BackstopPort } from "./backstop-port";
import { emptyRow, withStatus } from "./hook-walk";
import type { PassTrouble } from "./pass-timing";
import type { RecoverySettings } from "./settings";
import type { BackstopWatch } from "./watch-list";
import { watchProblem } from "./watch-status";

/**
 * One pass of the backstop for one entity (the rules are backstop.ts): which repositories to look
 * at, their open jobs at the forge, and what of them intake takes in. Calls stay bounded: one
 * discovery of repositories every few minutes, a few repositories per pass, a few jobs asked
 * about one by one.
 */

export type BackstopEntity = Pick<RecoveryEntityRow, "id" | "kind" | "owner" | "name" | "endpointName" | "forge">;

export interface BackstopResult {
  row: WatchRow;
  /** Jobs it found that were not held (recorded for the dashboard and counted). */
  found: RecoveryRow[];
  /** Scale sets to nudge. */
  nudge: string[];
  /** Passing trouble at the forge that cut the round short (the next pass comes sooner). */
  trouble: PassTrouble | null;
}

interface RoundState {
  next: number;
  repos?: string[];
  reposAt?: number;
  /** Per repository: run id → updated_at when its jobs were last listed. */
  runs?: Record<string, Record<string, string>>;
}

export async function runBackstop(
  env: Pick<Env, "DB" | "ENCRYPTION_KEY" | "ENCRYPTION_KEYS_PREVIOUS">,
  input: {
    watch: BackstopWatch;
    row: WatchRow | null;
    entity: BackstopEntity;
    origin: DeliveryOrigin;
    port: BackstopPort;
    settings: RecoverySettings;
    now: number;
  },
): Promise<BackstopResult> {
  const { watch, entity, port, settings, now } = input;
  const policy = settings.backstop;
  let row = input.row ?? emptyRow({ ...watch, kind: "backstop", appId: null }, now);
  const state: RoundState = { next: 0, ...(row.backstopState as RoundState | null) };
  const found: RecoveryRow[] = [];
  const nudge = new Set<string>();
  let trouble: PassTrouble | null = null;
  try {
    const view = await backstopView(env.DB, entity, now - policy.activeMs);
    let repos = state.repos ?? [];
    if (entity.kind === "repository") repos = [`${entity.owner}/${entity.name}`];
    else if (state.reposAt === undefined || now - state.reposAt >= policy.discoverMs) {
      repos = await discover(entity, view, port, now - policy.activeMs, policy.reposPerOrg);
      state.reposAt = now;
    }
    const round = reposThisPass(repos, state.next, policy.reposPerPass);
    const runs = state.runs ?? {};
    const listings: RepoListing[] = [];
    const seenRuns: Record<string, Record<string, string>> = {};
    for (const repo of round.repos) {
      const { listing, runs: r } = await port.openJobs(repo, runs[repo.toLowerCase()] ?? {});
      listings.push(listing);
      seenRuns[repo.toLowerCase()] = r;
    }
    const plan = planBackstop(listings, view.held, now, policy);
    const take: ForgeJob[] = [...plan.take];
    for (const h of plan.confirm) {
      const job = await port.job(h.repository, h.id);
      if (job && job.status !== h.status) take.push(job);
    }

    const heldIds = new Set(view.held.map((h) => h.id));
    const directories = new Map<string, Directory>();
    for (const job of take) {
      const payload = asPayload(job);
      const refs: EntityRef[] = [...deliveryEntities(DeliverySubject.parse(payload))];
      const own = entityLookupKey(entity.kind, entity.owner, entity.name);
      if (!refs.some((r) => r.lookupKey === own)) refs.push({ kind: entity.kind, lookupKey: own });
      const key = job.repository.toLowerCase();
      let directory = directories.get(key);
      if (!directory) {
        directory = await loadDirectory(env.DB, refs, input.origin, { fresh: true, endpoint: entity.endpointName });
        directories.set(key, directory);
      }
      const signers = directory.entities.filter((e) => e.id === entity.id);
      if (!signers.length) continue;
      const deliveryId = backstopDeliveryId(entity.endpointName, job);
      const outcome = await acceptWorkflowJob(env, {
        deliveryId,
        event: "backstop",
        json: payload,
        receivedAt: Date.now(),
        retentionDays: settings.retentionDays,
        directory,
        signers,
        logFields: { recovered: true, via: watch.key },
      });
      if (outcome.kind === "accepted") for (const s of outcome.nudge) nudge.add(s);
      if (outcome.kind !== "accepted" || heldIds.has(job.id)) continue;
      log({
        event: "delivery_recovered",
        means: "backstop",
        watch: watch.key,
        entity: entity.id,
        job_id: job.id,
        status: job.status,
        scale_set: outcome.scaleSetId,
      });
      found.push({
        key: deliveryId,
        watchKey: watch.key,
        entityId: entity.id,
        means: "backstop",
        githubId: null,
        event: "workflow_job",
        action: job.status,
        deliveredAt: null,
        statusCode: null,
        seenAt: now,
        outcome: "recovered",
        detail: null,
        jobId: job.id,
        attempts: 0,
      });
    }
    // Runs whose jobs were taken in are remembered; a repository not looked at keeps what it had.
    const nextState: RoundState = { next: round.next, repos, reposAt: state.reposAt, runs: { ...runs, ...seenRuns } };
    for (const r of Object.keys(nextState.runs!)) if (!repos.some((x) => x.toLowerCase() === r)) delete nextState.runs![r];
    row = withStatus({ ...row, backstopState: nextState as WatchRow["backstopState"] }, "ok", input.watch.reason, now);
  } catch (err) {
    const problem = watchProblem(err);
    trouble = problem.trouble;
    row = withStatus(row, problem.status, `${problem.detail} (the backstop looks for ${entity.id}'s jobs because ${watch.reason})`, now);
  }
  return { row, found, nudge: [...nudge], trouble };
}

/** The repositories the backstop goes round: those with jobs here lately first, then what the forge says is active. */
async function discover(
  entity: BackstopEntity,
  view: { repositories: string[]; organizations: string[] },
  port: BackstopPort,
  activeSince: number,
  reposPerOrg: number,
): Promise<string[]> {
  const out: string[] = [];
  const add = (r: string) => {
    if (!out.some((x) => x.toLowerCase() === r.toLowerCase())) out.push(r);
  };
  for (const r of view.repositories) add(r);
  const orgs: string[] = [];
  if (entity.kind === "organization") orgs.push(entity.owner);
  else {
    // An enterprise (or a Gitea instance): its organizations registered here, those its jobs came from, and the forge's list.
    const fromJobs = view.repositories.map((r) => r.split("/")[0]!);
    for (const o of [...view.organizations, ...fromJobs, ...(await port.organizations())])
      if (!orgs.some((x) => x.toLowerCase() === o.toLowerCase())) orgs.push(o);
  }
  for (const org of orgs.slice(0, 10)) for (const r of await port.orgRepositories(org, activeSince, reposPerOrg)) add(r);
  return out;
}
