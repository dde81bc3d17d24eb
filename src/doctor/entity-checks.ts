import { deliveryVerdict } from "./credential-checks";
import type { CredentialFacts, EntityFacts } from "./facts";
import {
  appNeeds,
  fineGrainedNeed,
  hookAccessNeed,
  missingPermissions,
  missingScopes,
  type PermissionNeed,
  type ScopeNeed,
  scopeNeeds,
} from "./github-needs";
import { probeProblem, probeStatus, took } from "./probe-text";
import { type CheckStatus, check, type DoctorCheck, type Finding, fromFindings } from "./report";

/**
 * Each repository, organization or enterprise: may its credentials manage its runners (what
 * GitHub granted, and a harmless read of its runners to prove it), and how do its jobs reach
 * the coordinator (its own hook at GitHub and that hook's last delivery, the App's webhook,
 * or no webhook at all for the runner scale set API).
 */

export const entitySubject = (e: Pick<EntityFacts, "kind" | "name">) => `${e.kind} ${e.name}`;
export const entityAccessId = (e: Pick<EntityFacts, "id">) => `entity.access:${e.id}`;
export const entityWebhookId = (e: Pick<EntityFacts, "id">) => `entity.webhook:${e.id}`;

/** The CLI's word for an entity's kind. */
export const cliNoun = (e: Pick<EntityFacts, "kind">) => ({ repository: "repo", organization: "org", enterprise: "enterprise" })[e.kind];

const permissionText = (n: PermissionNeed) => `${n.label}: ${n.level === "write" ? "Read and write" : "Read"} (${n.why})`;
const scopeText = (n: ScopeNeed) => `${n.anyOf.join(" or ")} (${n.why})`;

const appSettings =
  "In the App's settings (Settings → Developer settings → GitHub Apps → the App → Permissions & events) grant " +
  "it, then accept the new permissions on the installation (the account's Settings → GitHub Apps)";

/**
 * How credentials serve an entity, and what to do when they cannot: as its own credentials (the
 * App's webhook may feed it), or as a member of its credential pool (JIT configs only).
 */
export interface CredentialRole {
  /** The App's own webhook feeds the entity its jobs through these credentials. */
  appWebhook: boolean;
  /** The fix for an App installed on another account than the entity's. */
  otherAccountFix: string;
  /** The fix for App credentials on an enterprise. */
  enterpriseFix: string;
}

/** What the granted permissions (an App) or scopes (a classic PAT, as its read of `runners` showed them) lack for this entity. */
function grantFindings(e: EntityFacts, c: CredentialFacts, runners: EntityFacts["runners"], role: CredentialRole): Finding[] {
  if (c.authType === "app") {
    const inst = c.installation;
    if (!inst?.ok) return [];
    const needs = appNeeds(e.kind, { appWebhook: role.appWebhook });
    if (needs === null) return [{ status: "fail", text: "GitHub Apps cannot manage enterprise runners.", fix: role.enterpriseFix }];
    const out: Finding[] = [];
    const account = inst.value.account?.toLowerCase();
    if (account && account !== e.owner.toLowerCase()) {
      out.push({
        status: "fail",
        text: `Installation ${c.installationId} is on ${inst.value.account}, not ${e.owner}.`,
        fix: role.otherAccountFix,
      });
    }
    for (const sev of ["fail", "warn"] as const) {
      const missing = missingPermissions(inst.value.permissions, needs).filter((n) => n.severity === sev);
      if (missing.length) {
        out.push({
          status: sev,
          text: `The App lacks ${missing.map(permissionText).join(" and ")}.`,
          fix: `${appSettings}: ${missing.map((n) => `${n.label}: ${n.level === "write" ? "Read and write" : "Read"}`).join(", ")}`,
        });
      }
    }
    return out;
  }
  const scopes = runners?.ok ? runners.value.scopes : null;
  if (scopes === null) return [];
  const out: Finding[] = [];
  for (const sev of ["fail", "warn"] as const) {
    const missing = missingScopes(scopes, scopeNeeds(e.kind)).filter((n) => n.severity === sev);
    if (missing.length) {
      out.push({
        status: sev,
        text: `The token lacks the scope ${missing.map(scopeText).join(" and ")}; it has ${scopes.join(", ") || "no scopes"}.`,
        fix: `Give the token ${missing.map((n) => n.anyOf[0]).join(" and ")} at GitHub (Settings → Developer settings → Personal access tokens), or a new one: edgerunner credential update ${c.name} --token-from-stdin`,
      });
    }
  }
  return out;
}

/** What GitHub's refusal to list the entity's runners means, by kind of credentials. */
function runnersRefused(e: EntityFacts, c: CredentialFacts, status: number, message: string): Finding {
  if (status === 404) {
    const fix =
      c.authType === "app"
        ? `Give installation ${c.installationId} access to ${e.name} (the account's Settings → GitHub Apps → the App → Repository access)`
        : `Check the name, that the token's owner administers ${e.name}, and (a fine-grained token) that its resource owner and repository access include it`;
    return {
      status: "fail",
      text: `GitHub answered 404 for ${e.name}'s runners: it does not exist, or these credentials cannot see it.`,
      fix,
    };
  }
  const need =
    c.authType === "app"
      ? `${appSettings}: ${appNeeds(e.kind, { appWebhook: false })?.[0]?.label ?? "a classic PAT instead"}: Read and write`
      : `A classic PAT needs ${scopeNeeds(e.kind)[0]!.anyOf.join(" or ")}; a fine-grained one ${fineGrainedNeed(e.kind)}`;
  return { status: "fail", text: `GitHub refused to list ${e.name}'s runners (${status}${message ? `: ${message}` : ""}).`, fix: need };
}

/**
 * What the grants and a harmless read of the entity's runners with credentials `c` say: may they
 * manage its runners? The read's outcome lands in `details`.
 */
export function accessFindings(
  e: EntityFacts,
  c: CredentialFacts,
  runners: EntityFacts["runners"],
  role: CredentialRole,
  details: Record<string, unknown>,
): Finding[] {
  const findings = grantFindings(e, c, runners, role);
  if (runners && !runners.ok) {
    const err = runners.error;
    findings.push(
      err.kind === "refused" && (err.status === 403 || err.status === 404)
        ? runnersRefused(e, c, err.status, err.message)
        : { status: probeStatus(err), text: `Listing its runners: ${probeProblem(err)}.` },
    );
  } else if (runners?.ok) {
    if (runners.value.scopes !== null) details.scopes = runners.value.scopes;
    const how =
      c.authType === "pat" && runners.value.scopes === null
        ? " (a fine-grained token: whether it may also register runners shows only when it does)"
        : "";
    findings.push({ status: "ok", text: `GitHub let ${c.name} list its runners${how}.` });
  }
  return findings;
}

export function entityAccessCheck(e: EntityFacts, c: CredentialFacts | undefined, credentialStatus: CheckStatus): DoctorCheck {
  const id = entityAccessId(e);
  const subject = entitySubject(e);
  if (!c)
    return check(id, subject, "fail", "Its credentials are gone.", { fix: `edgerunner ${cliNoun(e)} update ${e.name} --credentials NAME` });
  const details: Record<string, unknown> = { credentials: c.name, auth_type: c.authType, ...took(e.runners) };
  if (credentialStatus === "fail" || c.health === "failing") {
    return check(id, subject, "skip", `Not checked: its credentials ${c.name} do not work (see above).`, { details });
  }
  const findings = accessFindings(
    e,
    c,
    e.runners,
    {
      appWebhook: c.hasWebhookSecret && e.scaleSets.webhook > 0,
      otherAccountFix: `Install the App on ${e.owner} and use that installation's credentials`,
      enterpriseFix: `Use a classic PAT with manage_runners:enterprise: edgerunner enterprise update ${e.name} --credentials <PAT credentials>`,
    },
    details,
  );
  return fromFindings(id, subject, findings, `${c.name} may manage its runners.`, details);
}

const DAY_MS = 24 * 60 * 60_000;

function lastJobText(e: EntityFacts): string {
  return e.lastJobAt === null
    ? "No job has reached the coordinator from it yet."
    : `The last job from it arrived ${new Date(e.lastJobAt).toISOString()}.`;
}

export function entityWebhookCheck(
  e: EntityFacts,
  c: CredentialFacts | undefined,
  webhookUrl: string | null,
  appWebhookStatus: CheckStatus | null,
  now: number,
): DoctorCheck {
  const id = entityWebhookId(e);
  const subject = entitySubject(e);
  const details: Record<string, unknown> = { last_job_at: e.lastJobAt === null ? null : new Date(e.lastJobAt).toISOString() };
  if (e.scaleSets.webhook === 0) {
    return e.scaleSets.scaleset_api > 0
      ? check(id, subject, "ok", "Its scale sets pull their jobs through GitHub's runner scale set API: no webhook needed.")
      : check(id, subject, "skip", "It has no scale set yet: no job of it needs a runner.");
  }
  if (c?.authType === "app" && c.hasWebhookSecret) {
    const status = appWebhookStatus ?? "skip";
    return check(id, subject, status, `Fed by App ${c.appId}'s webhook (credentials ${c.name}, checked above). ${lastJobText(e)}`, {
      ...(status === "fail" && { fix: `Fix App ${c.appId}'s webhook (above)` }),
      details,
    });
  }
  if (e.kind === "enterprise") {
    return check(
      id,
      subject,
      "skip",
      `GitHub has no API for enterprise webhooks: check it in the enterprise's settings (Settings → Hooks). ${lastJobText(e)}`,
      {
        details,
      },
    );
  }
  if (webhookUrl === null)
    return check(id, subject, "skip", "PUBLIC_URL is not usable (see above): no webhook URL to look for.", { details });
  details.webhook_url = webhookUrl;
  const install = `edgerunner ${cliNoun(e)} webhook install ${e.name}`;
  const h = e.hook;
  if (!h) return check(id, subject, "skip", `Not checked: its credentials do not work (see above). ${lastJobText(e)}`, { details });
  if (!h.hook.ok) {
    const err = h.hook.error;
    if (err.kind === "refused" && (err.status === 403 || err.status === 404)) {
      return check(
        id,
        subject,
        "warn",
        `Its credentials may not read its hooks (${err.status}), so GitHub's side is unknown. ${lastJobText(e)}`,
        {
          fix: `Grant ${hookAccessNeed(e.kind)}; or check it on GitHub (Settings → Webhooks): URL ${webhookUrl}, content type application/json, event Workflow jobs`,
          details,
        },
      );
    }
    return check(id, subject, probeStatus(err), `Looking for its hook: ${probeProblem(err)}. ${lastJobText(e)}`, { details });
  }
  const hook = h.hook.value;
  if (hook === null) {
    const recent = e.lastJobAt !== null && now - e.lastJobAt < 7 * DAY_MS;
    return recent
      ? check(
          id,
          subject,
          "warn",
          `No hook of it points at ${webhookUrl}, yet jobs arrive: another URL (a proxy?) feeds it. ${lastJobText(e)}`,
          {
            fix: `If that is not on purpose: ${install}`,
            details,
          },
        )
      : check(id, subject, "fail", `No hook of it delivers to ${webhookUrl}: its jobs never reach the coordinator.`, {
          fix: install,
          details,
        });
  }
  Object.assign(details, { hook_id: hook.id, active: hook.active, events: hook.events, content_type: hook.contentType });
  const findings: Finding[] = [];
  if (!hook.active) findings.push({ status: "fail", text: `Hook ${hook.id} is inactive: GitHub sends it nothing.`, fix: install });
  if (!hook.events.includes("workflow_job") && !hook.events.includes("*")) {
    findings.push({
      status: "fail",
      text: `Hook ${hook.id} is not subscribed to workflow_job (it has ${hook.events.join(", ") || "none"}).`,
      fix: install,
    });
  }
  const d = h.lastDelivery;
  if (d && !d.ok) findings.push({ status: "warn", text: `Reading its recent deliveries: ${probeProblem(d.error)}.` });
  else if (d?.ok && d.value) {
    details.last_delivery = d.value;
    findings.push(deliveryVerdict(d.value, `Give GitHub the entity's secret again: ${install}`, webhookUrl));
  } else if (d?.ok) findings.push({ status: "ok", text: "GitHub has made no delivery yet." });
  findings.push({ status: "ok", text: lastJobText(e) });
  return fromFindings(id, subject, findings, `Hook ${hook.id} delivers workflow_job events to ${webhookUrl}.`, details);
}
