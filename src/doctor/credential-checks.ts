import type { CredentialFacts, DeliveryFacts } from "./facts";
import { probeProblem, probeStatus, took } from "./probe-text";
import { check, type DoctorCheck, type Finding, fromFindings } from "./report";

/**
 * Each set of GitHub credentials: does GitHub still take them (their recorded health, the API
 * URL they are bound to, an App's installation), and, for an App whose own webhook feeds the
 * coordinator, is that webhook pointed here and delivering. What each entity needs of them is
 * entity-checks.ts.
 */

export const credentialSubject = (c: Pick<CredentialFacts, "name">) => `credentials ${c.name}`;
export const credentialHealthId = (c: Pick<CredentialFacts, "id">) => `credentials.health:${c.id}`;

const sameUrl = (a: string, b: string) => a.replace(/\/+$/, "") === b.replace(/\/+$/, "");

function newSecretFix(c: CredentialFacts): string {
  return c.authType === "pat"
    ? `Give them a working token: edgerunner credential update ${c.name} --token-from-stdin`
    : `Check the App ID, installation ID and private key: edgerunner credential update ${c.name} --private-key-from-file app.pem [--installation-id N]`;
}

const FORGE_NAMES = { github: "GitHub", gitea: "Gitea", forgejo: "Forgejo" } as const;

export function credentialHealthCheck(c: CredentialFacts, usedBy: number, now: number): DoctorCheck {
  const forge = FORGE_NAMES[c.forge ?? "github"];
  const id = credentialHealthId(c);
  const subject = credentialSubject(c);
  const details: Record<string, unknown> = { auth_type: c.authType, endpoint: c.endpoint, entities: usedBy };
  if (c.appId !== null) Object.assign(details, { app_id: c.appId, installation_id: c.installationId });

  if (c.boundApiUrl === null || !sameUrl(c.boundApiUrl, c.apiBaseUrl)) {
    const why =
      c.boundApiUrl === null
        ? "they record no API URL they were created for (stored by an older version)"
        : `they were created for ${c.boundApiUrl}, but endpoint ${c.endpoint} now points at ${c.apiBaseUrl}`;
    return check(id, subject, "fail", `Never sent to ${forge}: ${why}.`, {
      fix: "Add the credentials again (and move the entities to them) on an endpoint whose API URL is where they belong",
      details,
    });
  }
  if (c.health === "failing") {
    const since = c.failedAt === null ? "" : ` since ${new Date(c.failedAt).toISOString()}`;
    return check(
      id,
      subject,
      "fail",
      `${forge} refused them${since}: ${c.failureReason ?? "no reason recorded"}. Nothing uses them until they change.`,
      {
        fix: newSecretFix(c),
        details,
      },
    );
  }

  const findings: Finding[] = [];
  const inst = c.installation;
  if (inst && !inst.ok) {
    const e = inst.error;
    if (e.kind === "refused" && e.status === 404) {
      findings.push({
        status: "fail",
        text: `GitHub knows no installation ${c.installationId} of App ${c.appId}.`,
        fix: `Install the App on the account, then: edgerunner credential update ${c.name} --installation-id <the number at the end of the installation's settings URL>`,
      });
    } else if (e.kind === "refused" && e.status === 401) {
      findings.push({ status: "fail", text: "GitHub refused the App's JWT: a wrong App ID or private key.", fix: newSecretFix(c) });
    } else {
      findings.push({ status: probeStatus(e), text: `Asking GitHub about installation ${c.installationId}: ${probeProblem(e)}.` });
    }
  } else if (inst?.ok) {
    const v = inst.value;
    Object.assign(details, {
      account: v.account,
      repository_selection: v.repositorySelection,
      permissions: v.permissions,
      events: v.events,
      ...took(inst),
    });
    if (v.suspended) {
      findings.push({
        status: "fail",
        text: `Installation ${c.installationId} is suspended: GitHub refuses its tokens.`,
        fix: "Unsuspend it in the account's Settings → GitHub Apps → the App → Configure",
      });
    }
  }
  if (c.blockedUntil !== null && c.blockedUntil > now) {
    findings.push({
      status: "warn",
      text: `${forge} rate-limited them: no call before ${new Date(c.blockedUntil).toISOString()}.`,
      fix: "Spread the entities over more credentials, or lower GITHUB_POINTS_PER_MINUTE if secondary limits keep hitting",
    });
  }
  const use = usedBy === 0 ? "No entity uses them." : `Used by ${usedBy} entit${usedBy === 1 ? "y" : "ies"}.`;
  const okText = inst?.ok
    ? `${forge} accepts them (installation on ${inst.value.account ?? "an unknown account"}). ${use}`
    : `${forge} accepts them. ${use}`;
  return fromFindings(id, subject, findings, okText, details);
}

/** What GitHub's record of a delivery says about the webhook, and what to do about it. */
export function deliveryVerdict(d: DeliveryFacts, fixSecret: string, webhookUrl: string): Finding {
  const what = `GitHub's last delivery (${d.event}, ${d.at})`;
  if (d.statusCode >= 200 && d.statusCode < 300) return { status: "ok", text: `${what} was answered ${d.statusCode}.` };
  if (d.statusCode === 401) {
    return { status: "fail", text: `${what} was refused with 401: the secrets at GitHub and here differ.`, fix: fixSecret };
  }
  if (d.statusCode === 0) {
    return {
      status: "fail",
      text: `${what} got no answer (${d.status}).`,
      fix: `GitHub could not reach ${webhookUrl}: check that PUBLIC_URL answers from the internet (edgerunner doctor tries it from where you are)`,
    };
  }
  if (d.statusCode >= 500) {
    return {
      status: "warn",
      text: `${what} failed with ${d.statusCode} (${d.status}).`,
      fix: "See what the coordinator logged then (npx wrangler tail); redeliver it from the hook's Recent Deliveries on GitHub",
    };
  }
  return {
    status: "fail",
    text: `${what} was answered ${d.statusCode} (${d.status}).`,
    fix: `The URL must be ${webhookUrl}, and nothing in front of it (Cloudflare Access) may stop GitHub: see docs/operations.md`,
  };
}

/** The App's own webhook, for App credentials that hold its secret. */
export function appWebhookCheck(c: CredentialFacts, webhookUrl: string | null): DoctorCheck | null {
  if (c.authType !== "app" || !c.hasWebhookSecret) return null;
  const id = `credentials.app_webhook:${c.id}`;
  const subject = `App ${c.appId} webhook (credentials ${c.name})`;
  const hook = c.appHook;
  if (webhookUrl === null) return check(id, subject, "skip", "PUBLIC_URL is not usable (see above): no webhook URL to compare with.");
  if (!hook) return check(id, subject, "skip", "Not asked: the credentials do not work (see above).");
  const settings = `the App's settings (Settings → Developer settings → GitHub Apps → the App → Webhook)`;
  if (!hook.config.ok) {
    return check(id, subject, probeStatus(hook.config.error), `Reading the App's webhook settings: ${probeProblem(hook.config.error)}.`);
  }
  const { url, contentType } = hook.config.value;
  const details: Record<string, unknown> = { url, content_type: contentType, expected_url: webhookUrl };
  const findings: Finding[] = [];
  if (!url) {
    findings.push({
      status: "fail",
      text: "The App has no webhook URL.",
      fix: `In ${settings}: Active, Webhook URL ${webhookUrl}, and the secret these credentials hold`,
    });
  } else if (!sameUrl(url, webhookUrl)) {
    findings.push({
      status: "fail",
      text: `The App's webhook goes to ${url}, not ${webhookUrl}.`,
      fix: `Set the Webhook URL in ${settings} to ${webhookUrl}`,
    });
  }
  const inst = c.installation;
  if (inst?.ok && !inst.value.events.includes("workflow_job")) {
    findings.push({
      status: "fail",
      text: "The installation is not subscribed to workflow_job events.",
      fix: "In the App's Permissions & events: Repository permissions → Actions: Read, and Subscribe to events → Workflow job; then accept the new permissions on the installation",
    });
  }
  if (url && hook.lastDelivery.ok) {
    const d = hook.lastDelivery.value;
    if (d) {
      details.last_delivery = d;
      findings.push(
        deliveryVerdict(
          d,
          `Give GitHub and these credentials the same secret: edgerunner credential update ${c.name} --webhook-secret-from-file FILE, and the same value in ${settings}`,
          webhookUrl,
        ),
      );
    } else findings.push({ status: "ok", text: "GitHub has made no delivery yet." });
  } else if (url && !hook.lastDelivery.ok) {
    findings.push({ status: "warn", text: `Reading its recent deliveries: ${probeProblem(hook.lastDelivery.error)}.` });
  }
  return fromFindings(id, subject, findings, `The App delivers to ${webhookUrl}.`, details);
}
