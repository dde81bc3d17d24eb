import { giteaWebhookUrlFor } from "../lib/webhook-url";
import { configChecks, webhookUrlOf } from "./config-checks";
import { appWebhookCheck, credentialHealthCheck } from "./credential-checks";
import { entityAccessCheck, entityWebhookCheck } from "./entity-checks";
import type { DoctorFacts } from "./facts";
import { forgeAccessCheck, forgePoolSkip, forgeWebhookCheck, onOtherForge } from "./forge-entity-checks";
import { entityPoolCheck, entityPoolId } from "./pool-checks";
import { providerCheck } from "./provider-checks";
import { recoveryCheck } from "./recovery-checks";
import { assembleReport, type CheckStatus, type DoctorCheck, type DoctorReport } from "./report";
import { scaleSetLabelsCheck, scaleSetReadyCheck, scaleSetRunnersCheck, unmatchedJobsCheck } from "./scaleset-checks";
import { usageCheck } from "./usage-checks";

/**
 * The whole report from what was gathered: the configuration and the Cloudflare account's usage
 * this month first, then each link in the order a job travels them (credentials, entities,
 * providers, scale sets), so the first failure printed is usually the one to fix first. A scale set's verdict builds on the
 * verdicts of the links under it.
 */
export function diagnose(f: DoctorFacts): DoctorReport {
  const checks: DoctorCheck[] = [...configChecks(f.config)];
  // The account's limits are under every link: past a Free plan limit, Cloudflare refuses the operations they all need.
  if (f.usage) checks.push(usageCheck(f.usage, f.now));
  const webhookUrl = webhookUrlOf(f.config.publicUrl);

  const credentialStatus = new Map<string, CheckStatus>();
  const appWebhookStatus = new Map<string, CheckStatus>();
  for (const c of f.credentials) {
    const usedBy = f.entities.filter((e) => e.credentialId === c.id || e.pool.some((m) => m.credentialId === c.id)).length;
    const health = credentialHealthCheck(c, usedBy, f.now);
    checks.push(health);
    credentialStatus.set(c.id, health.status);
    const hook = appWebhookCheck(c, webhookUrl);
    if (hook) {
      checks.push(hook);
      appWebhookStatus.set(c.id, hook.status);
    }
  }

  const credentialsById = new Map(f.credentials.map((c) => [c.id, c]));
  const accessStatus = new Map<string, CheckStatus>();
  const webhookStatus = new Map<string, CheckStatus>();
  for (const e of f.entities) {
    const c = credentialsById.get(e.credentialId);
    // Gitea and Forgejo entities get only the checks that mean something there (forge-entity-checks.ts).
    const other = onOtherForge(e) ? e : null;
    const access = other
      ? forgeAccessCheck(other, c, credentialStatus.get(e.credentialId) ?? "skip")
      : entityAccessCheck(e, c, credentialStatus.get(e.credentialId) ?? "skip");
    const webhook = other
      ? forgeWebhookCheck(other, webhookUrl === null ? null : giteaWebhookUrlFor(f.config.publicUrl!))
      : entityWebhookCheck(e, c, webhookUrl, appWebhookStatus.get(e.credentialId) ?? null, f.now);
    checks.push(access, webhook);
    const recovery = recoveryCheck(e, f.recovery, f.now);
    if (recovery) checks.push(recovery);
    // A pool member's verdict is its own: a failing one is skipped when JIT configs are minted,
    // so it does not decide whether the entity's scale sets can get runners.
    for (const m of e.pool) {
      const mc = credentialsById.get(m.credentialId);
      checks.push(
        other
          ? forgePoolSkip(other, entityPoolId(e, m.credentialId), mc?.name ?? "(gone)")
          : entityPoolCheck(e, m, mc, credentialStatus.get(m.credentialId) ?? "skip"),
      );
    }
    accessStatus.set(e.id, access.status);
    webhookStatus.set(e.id, webhook.status);
  }

  const providerStatus = new Map<string, CheckStatus>();
  for (const p of f.providers) {
    const shim = providerCheck(p);
    checks.push(shim);
    providerStatus.set(p.id, shim.status);
  }

  const entitiesById = new Map(f.entities.map((e) => [e.id, e]));
  const providersById = new Map(f.providers.map((p) => [p.id, p]));
  for (const s of f.scaleSets) {
    const e = entitiesById.get(s.entityId);
    const c = e ? credentialsById.get(e.credentialId) : undefined;
    checks.push(
      scaleSetReadyCheck(s, e, {
        credentials: { name: c?.name ?? "(gone)", status: (e && credentialStatus.get(e.credentialId)) ?? "skip" },
        access: accessStatus.get(s.entityId) ?? "skip",
        webhook: webhookStatus.get(s.entityId) ?? "skip",
        provider: { name: providersById.get(s.providerId)?.name ?? "(gone)", status: providerStatus.get(s.providerId) ?? "skip" },
      }),
      scaleSetRunnersCheck(s, e, f.now),
      scaleSetLabelsCheck(s, e),
    );
  }
  if (f.unmatched) checks.push(unmatchedJobsCheck(f.unmatched));
  return assembleReport(checks, f.config.publicUrl, f.now);
}
