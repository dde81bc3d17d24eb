import type { Forge } from "../db/github/schema";
import { cliNoun, entityAccessId, entityWebhookId } from "./entity-checks";
import type { CredentialFacts, EntityFacts } from "./facts";
import { probeProblem, probeStatus, took } from "./probe-text";
import { type CheckStatus, check, type DoctorCheck, type Finding, fromFindings } from "./report";

/**
 * An entity on a Gitea or Forgejo endpoint, checked for what means something on its forge.
 * Access: a cheap read with its token that also proves the scope (Gitea: the scope's runners;
 * Forgejo: its waiting jobs, the list its scale sets poll); neither forge has GitHub's App
 * permissions or scope header, so nothing else is judged. Webhook: Gitea's hook through Gitea's
 * API (an instance's is a system hook); Forgejo sends no workflow_job webhooks, its scale sets
 * poll. Credential pools mint GitHub JIT configs; these forges' runners are registered with the
 * entity's own token, so pool checks are skipped.
 */

type OtherForge = Exclude<Forge, "github">;
const FORGE_NAME: Record<OtherForge, string> = { gitea: "Gitea", forgejo: "Forgejo" };

/** An entity's name on its forge: a Gitea or Forgejo entity of kind enterprise is the whole instance. */
export const forgeEntitySubject = (e: Pick<EntityFacts, "kind" | "name" | "forge">) =>
  e.kind === "enterprise" && e.forge !== "github" ? `${FORGE_NAME[e.forge]} instance` : `${e.kind} ${e.name}`;

/** The token scopes each forge asks for, by entity kind (docs/forges.md). */
function tokenNeed(forge: OtherForge, kind: EntityFacts["kind"]): string {
  const scope = kind === "repository" ? "write:repository" : kind === "organization" ? "write:organization" : "write:admin";
  const who =
    kind === "repository"
      ? "admin rights on the repository"
      : kind === "organization"
        ? "owner rights on the organization"
        : "a site administrator";
  return `a ${FORGE_NAME[forge]} access token with ${scope} (and ${who})`;
}

export function forgeAccessCheck(
  e: EntityFacts & { forge: OtherForge },
  c: CredentialFacts | undefined,
  credentialStatus: CheckStatus,
): DoctorCheck {
  const id = entityAccessId(e);
  const subject = forgeEntitySubject(e);
  const forge = FORGE_NAME[e.forge];
  if (!c)
    return check(id, subject, "fail", "Its credentials are gone.", { fix: `edgerunner ${cliNoun(e)} update ${e.name} --credentials NAME` });
  const details: Record<string, unknown> = { credentials: c.name, forge: e.forge, ...took(e.runners) };
  if (credentialStatus === "fail" || c.health === "failing")
    return check(id, subject, "skip", `Not checked: its credentials ${c.name} do not work (see above).`, { details });
  const what = e.forge === "gitea" ? "its runners" : "its waiting jobs";
  const r = e.runners;
  if (!r) return check(id, subject, "skip", `Not checked: ${c.name} were not used.`, { details });
  if (r.ok) return check(id, subject, "ok", `${forge} let ${c.name} list ${what}.`, { details });
  const err = r.error;
  if (err.kind === "refused" && (err.status === 401 || err.status === 403 || err.status === 404))
    return check(id, subject, "fail", `${forge} answered ${err.status} for ${what}: ${err.message || "no message"}.`, {
      fix: `Check the name, and give it ${tokenNeed(e.forge, e.kind)}: edgerunner credential update ${c.name} --token-from-stdin`,
      details,
    });
  return check(id, subject, probeStatus(err), `Listing ${what}: ${probeProblem(err)}.`, { details });
}

function lastJobText(e: EntityFacts): string {
  return e.lastJobAt === null
    ? "No job has reached the coordinator from it yet."
    : `The last job from it arrived ${new Date(e.lastJobAt).toISOString()}.`;
}

/** `webhookUrl`: this coordinator's Gitea webhook URL, null when PUBLIC_URL is not usable. */
export function forgeWebhookCheck(e: EntityFacts & { forge: OtherForge }, webhookUrl: string | null): DoctorCheck {
  const id = entityWebhookId(e);
  const subject = forgeEntitySubject(e);
  if (e.forge === "forgejo")
    return check(
      id,
      subject,
      "ok",
      "Polled: no webhook needed (Forgejo sends no workflow_job webhooks; its scale sets poll for waiting jobs).",
    );
  const details: Record<string, unknown> = { last_job_at: e.lastJobAt === null ? null : new Date(e.lastJobAt).toISOString() };
  if (e.scaleSets.webhook === 0) return check(id, subject, "skip", "It has no scale set yet: no job of it needs a runner.");
  if (webhookUrl === null)
    return check(id, subject, "skip", "PUBLIC_URL is not usable (see above): no webhook URL to look for.", { details });
  details.webhook_url = webhookUrl;
  const install = `edgerunner ${cliNoun(e)} webhook install ${e.name}`;
  const h = e.hook;
  if (!h) return check(id, subject, "skip", `Not checked: its credentials do not work (see above). ${lastJobText(e)}`, { details });
  if (!h.hook.ok) {
    const err = h.hook.error;
    if (err.kind === "refused" && (err.status === 403 || err.status === 404))
      return check(
        id,
        subject,
        "warn",
        `Its token may not read its hooks at Gitea (${err.status}), so Gitea's side is unknown. ${lastJobText(e)}`,
        {
          fix: `Give it ${tokenNeed("gitea", e.kind)}; or check the hook in Gitea's settings: URL ${webhookUrl}, type Gitea, JSON, event Workflow jobs`,
          details,
        },
      );
    return check(id, subject, probeStatus(err), `Looking for its hook at Gitea: ${probeProblem(err)}. ${lastJobText(e)}`, { details });
  }
  const hook = h.hook.value;
  if (hook === null)
    return check(id, subject, "fail", `No Gitea hook of it delivers to ${webhookUrl}: its jobs never reach the coordinator.`, {
      fix: install,
      details,
    });
  Object.assign(details, { hook_id: hook.id, active: hook.active, events: hook.events, content_type: hook.contentType });
  const findings: Finding[] = [];
  if (!hook.active) findings.push({ status: "fail", text: `Hook ${hook.id} is inactive: Gitea sends it nothing.`, fix: install });
  if (!hook.events.includes("workflow_job"))
    findings.push({
      status: "fail",
      text: `Hook ${hook.id} is not subscribed to workflow_job (it has ${hook.events.join(", ") || "none"}).`,
      fix: install,
    });
  findings.push({ status: "ok", text: lastJobText(e) });
  return fromFindings(id, subject, findings, `Hook ${hook.id} delivers workflow_job events to ${webhookUrl}.`, details);
}

/** A pool member of a Gitea or Forgejo entity: pools mint GitHub JIT configs, which these forges do not use. */
export function forgePoolSkip(e: EntityFacts & { forge: OtherForge }, id: string, credentialsName: string): DoctorCheck {
  return check(
    id,
    `${forgeEntitySubject(e)}: pool credentials ${credentialsName}`,
    "skip",
    `Not used on ${FORGE_NAME[e.forge]}: its runners are registered with the entity's own token (a credential pool only mints JIT configs).`,
  );
}

/** Whether an entity is on Gitea or Forgejo (the checks above), narrowing its forge. */
export const onOtherForge = (e: EntityFacts): e is EntityFacts & { forge: OtherForge } => e.forge !== "github";
