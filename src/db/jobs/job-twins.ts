/**
 * One GitHub job, reported twice: a repository's job reaches us through the repository's hook
 * and through its organization's, each signed by its own entity's secret. The tenant rule
 * (docs/security.md) keeps a row per signer: a delivery touches only its own entity's rows. But
 * it is one job at GitHub and one runner serves it, so only one of its rows may ask for a
 * machine or be counted: the routed one, else the first stored (lowest seq). The others are its
 * twins. Rows are twins only when both entities are that repository's own (the repository
 * itself, or the organization that owns it) on the same endpoint: another tenant signing a
 * delivery that names the job cannot make a victim's row a twin.
 *
 * These are SQL fragments over a `jobs` row aliased `j`, for the stores that count demand and
 * jobs (scale set snapshots, metrics, the dashboard, the setup check).
 */

/** The entity `e` is job `j`'s repository or the organization that owns it. */
const repositoryOwn = (e: string, j: string) =>
  `((${e}.kind = 'repository' AND lower(${e}.owner || '/' || ${e}.name) = lower(${j}.repository))
     OR (${e}.kind = 'organization' AND lower(${e}.owner) = lower(${j}.owner)))`;

/** True when another row of the same GitHub job serves it instead of `j`. */
export const hasServingTwin = (j = "j") => `EXISTS (
  SELECT 1 FROM jobs t JOIN entities te ON te.id = t.entity_id JOIN entities je ON je.id = ${j}.entity_id
   WHERE t.id = ${j}.id AND t.source = ${j}.source AND t.entity_id != ${j}.entity_id
     AND lower(t.repository) = lower(${j}.repository) AND te.endpoint_name = je.endpoint_name
     AND ${repositoryOwn("te", j)} AND ${repositoryOwn("je", j)}
     AND ((t.scale_set_id IS NOT NULL AND ${j}.scale_set_id IS NULL)
          OR ((t.scale_set_id IS NULL) = (${j}.scale_set_id IS NULL) AND t.seq < ${j}.seq)))`;
