import type { EntityKind } from "../db/directory/schema";
import { entityLookupKey } from "../github/entity-names";
import { isShapeLabel } from "../shapes/shape-label";
import { normalizeLabels } from "./labels";

/** What routing needs to know about a scale set. `labels` are normalized (see labels.ts). */
export interface RoutableScaleSet {
  id: string;
  labels: readonly string[];
  enabled: boolean;
  priority: number;
  createdAt: number;
  /** A shaped scale set's shape key (src/shapes): it serves jobs that carry a `<key>=` label. */
  shapeKey?: string | null;
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
 * Whether a scale set can take a job. A shaped one takes only jobs with a `<key>=` label, and
 * checks the job's other labels as any scale set does (its shape is judged by the scale set's
 * object, which tells the job why when it cannot have it).
 */
export function serves(s: Pick<RoutableScaleSet, "labels" | "shapeKey">, jobLabels: readonly string[]): boolean {
  if (!s.shapeKey) return servesLabels(s.labels, jobLabels);
  const key = s.shapeKey;
  if (!jobLabels.some((l) => l.trim().toLowerCase().startsWith(`${key}=`))) return false;
  const rest = normalizeLabels(jobLabels.filter((l) => !isShapeLabel(l, key)));
  const have = new Set(s.labels.map((l) => l.toLowerCase()));
  return rest.every((l) => have.has(l));
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
    b.priority - a.priority || a.labels.length - b.labels.length || a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/**
 * Picks the scale set for a job among the candidates (those in its reporter's scope, see
 * `inScope`): enabled, serving all the job's labels, best by `compareCandidates`. Null when
 * none matches: the job is stored unmatched.
 */
export function routeJob<S extends RoutableScaleSet>(jobLabels: readonly string[], scaleSets: readonly S[]): S | null {
  let best: S | null = null;
  for (const s of scaleSets) {
    if (!s.enabled || !serves(s, jobLabels)) continue;
    if (best === null || compareCandidates(s, best) < 0) best = s;
  }
  return best;
}

/**
 * An entity that reported (signed) a job, with what we registered about its parents. A job
 * may run only on the scale sets of the entities that signed it, and on their parents' when
 * the signer was registered with `useParentScaleSets`: never on an entity the payload merely names.
 */
export interface Reporter {
  id: string;
  kind: EntityKind;
  /** A repository's owner, an organization's name, an enterprise's slug. */
  owner: string;
  useParentScaleSets: boolean;
  /** The enterprise it was registered under, if any. */
  enterprise: string | null;
  /** For a repository: the registered `enterprise` of its organization, if that organization is registered. */
  organizationEnterprise?: string | null;
}

/**
 * Lookup keys (github/entity-names.ts) of the parents whose scale sets a reporter's jobs may
 * use: a repository's organization (its registered owner) and its enterprise (its own link, else
 * its organization's); an organization's enterprise. None unless the reporter opted in.
 */
export function parentKeys(r: Reporter): string[] {
  if (!r.useParentScaleSets || r.kind === "enterprise") return [];
  const keys: string[] = [];
  if (r.kind === "repository") keys.push(entityLookupKey("organization", r.owner));
  const enterprise = r.enterprise ?? (r.kind === "repository" ? (r.organizationEnterprise ?? null) : null);
  if (enterprise) keys.push(entityLookupKey("enterprise", enterprise));
  return keys;
}

/** A scale set with the entity it belongs to, as routing by reporter needs it. */
export interface ScopedScaleSet extends RoutableScaleSet {
  entityId: string;
  /** Its entity's lookup key. */
  lookupKey: string;
}

/** The scale sets a job reported by `reporters` may run on (see Reporter). */
export function inScope<S extends ScopedScaleSet>(scaleSets: readonly S[], reporters: readonly Reporter[]): S[] {
  const ids = new Set(reporters.map((r) => r.id));
  const keys = new Set(reporters.flatMap(parentKeys));
  return scaleSets.filter((s) => ids.has(s.entityId) || keys.has(s.lookupKey));
}

/** A job stored unmatched, waiting for a scale set that serves it. */
export interface WaitingJob {
  /** The job's row (jobs.seq). */
  seq: number;
  labels: string[];
  /** The entity whose webhook reported the job. */
  reporter: Reporter;
}

/** Where each waiting job (by row) goes now: the best scale set in its reporter's scope, as at intake; or nowhere. */
export function rerouteWaitingJobs<S extends ScopedScaleSet>(jobs: readonly WaitingJob[], scaleSets: readonly S[]): Map<number, S> {
  const out = new Map<number, S>();
  for (const j of jobs) {
    const best = routeJob(j.labels, inScope(scaleSets, [j.reporter]));
    if (best) out.set(j.seq, best);
  }
  return out;
}
