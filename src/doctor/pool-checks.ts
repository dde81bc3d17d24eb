import { accessFindings, cliNoun, entitySubject } from "./entity-checks";
import type { CredentialFacts, EntityFacts, PoolMemberFacts } from "./facts";
import { took } from "./probe-text";
import { type CheckStatus, check, type DoctorCheck, fromFindings } from "./report";

/**
 * Each credential of an entity's credential pool, checked as the entity's own credentials are
 * (may they manage its runners: what GitHub granted, and a harmless read of its runners), but
 * for what a pool member does: mint JIT configs. So it needs no webhook, and what to do when it
 * cannot serve the entity is to fix it or take it out of the pool. A member that fails is skipped
 * when JIT configs are minted; the entity's own credentials and the rest of the pool carry on.
 */

export const entityPoolId = (e: Pick<EntityFacts, "id">, credentialId: string) => `entity.pool:${e.id}:${credentialId}`;

export function entityPoolCheck(
  e: EntityFacts,
  member: PoolMemberFacts,
  c: CredentialFacts | undefined,
  credentialStatus: CheckStatus,
): DoctorCheck {
  const id = entityPoolId(e, member.credentialId);
  const name = c?.name ?? "(gone)";
  const subject = `${entitySubject(e)}: pool credentials ${name}`;
  const others = e.pool.length > 1 ? "<the others, comma-separated>" : "''";
  const takeOut = `take them out of the pool: edgerunner ${cliNoun(e)} update ${e.name} --pool-credentials ${others}`;
  if (!c) return check(id, subject, "fail", "A credential of its pool is gone.", { fix: takeOut });
  const details: Record<string, unknown> = { credentials: c.name, auth_type: c.authType, ...took(member.runners) };
  if (credentialStatus === "fail" || c.health === "failing") {
    return check(
      id,
      subject,
      "skip",
      `Not checked: ${c.name} do not work (see above). Its JIT configs are minted with its other credentials meanwhile.`,
      { details },
    );
  }
  const findings = accessFindings(
    e,
    c,
    member.runners,
    {
      appWebhook: false,
      otherAccountFix: `Install App ${c.appId} on ${e.owner} and pool that installation's credentials instead, or ${takeOut}`,
      enterpriseFix: `GitHub Apps cannot mint enterprise runners: ${takeOut}`,
    },
    details,
  );
  return fromFindings(id, subject, findings, `${c.name} may mint its runners' JIT configs.`, details);
}
