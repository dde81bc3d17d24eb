import { normalizeLabels } from "./labels";

/** What routing needs to know about a scale set. `labels` are normalized (see labels.ts). */
export interface RoutableScaleSet {
  id: string;
  labels: readonly string[];
  enabled: boolean;
  priority: number;
  createdAt: number;
}

/**
 * Whether a scale set's runners can take a job: every label the job asks for is one of
 * the scale set's labels, compared case-insensitively. A job without labels asks for
 * nothing we can check, so it matches nothing.
 */
export function servesLabels(scaleSetLabels: readonly string[], jobLabels: readonly string[]): boolean {
  const wanted = normalizeLabels(jobLabels);
  if (wanted.length === 0) return false;
  const have = new Set(scaleSetLabels.map((l) => l.toLowerCase()));
  return wanted.every((l) => have.has(l));
}

/**
 * Order among scale sets that all serve a job, best first:
 * 1. higher `priority`;
 * 2. fewer labels beyond the job's (the most specific runner: a `gpu` set is not used up
 *    by jobs a plain `linux` set can take);
 * 3. older (`created_at`), so adding a scale set does not silently take over existing demand;
 * 4. `id`, so the choice is total and every delivery picks the same set.
 */
export function compareCandidates(a: RoutableScaleSet, b: RoutableScaleSet): number {
  return (
    b.priority - a.priority ||
    a.labels.length - b.labels.length ||
    a.createdAt - b.createdAt ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/**
 * Picks the scale set for a job among those of the job's entities (its repository, the
 * owning organization and enterprise): enabled, serving all the job's labels, best by
 * `compareCandidates`. Null when none matches: the job is stored unmatched.
 */
export function routeJob<S extends RoutableScaleSet>(jobLabels: readonly string[], scaleSets: readonly S[]): S | null {
  let best: S | null = null;
  for (const s of scaleSets) {
    if (!s.enabled || !servesLabels(s.labels, jobLabels)) continue;
    if (best === null || compareCandidates(s, best) < 0) best = s;
  }
  return best;
}

/** A job stored unmatched, waiting for a scale set that serves it. */
export interface WaitingJob {
  id: number;
  repository: string;
  owner: string;
  labels: string[];
  /** The entity whose webhook reported the job. */
  entityId: string | null;
}

export interface CandidateScaleSet extends RoutableScaleSet {
  entityId: string;
  /** Its entity's lookup key (routes/entities.ts entityLookupKey: `repository:owner/name`, `organization:owner`, …). */
  lookupKey: string;
}

/**
 * Where a waiting job goes now: the best of the scale sets of its repository, its owner's
 * organization and the entity that reported it (an enterprise), as at intake; or nowhere.
 */
export function rerouteWaitingJobs<S extends CandidateScaleSet>(jobs: readonly WaitingJob[], scaleSets: readonly S[]): Map<number, S> {
  const byKey = new Map<string, S[]>();
  const byEntity = new Map<string, S[]>();
  for (const s of scaleSets) {
    byKey.set(s.lookupKey, [...(byKey.get(s.lookupKey) ?? []), s]);
    byEntity.set(s.entityId, [...(byEntity.get(s.entityId) ?? []), s]);
  }
  const out = new Map<number, S>();
  for (const j of jobs) {
    const candidates = new Set([
      ...(byKey.get(`repository:${j.repository.toLowerCase()}`) ?? []),
      ...(byKey.get(`organization:${j.owner.toLowerCase()}`) ?? []),
      ...(j.entityId ? (byEntity.get(j.entityId) ?? []) : []),
    ]);
    const best = routeJob(j.labels, [...candidates]);
    if (best) out.set(j.id, best);
  }
  return out;
}
