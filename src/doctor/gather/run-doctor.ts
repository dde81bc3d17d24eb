import { type DoctorRows, readDoctorRows } from "../../db/doctor/doctor-queries";
import type { Env } from "../../env";
import { forgejoFetch } from "../../forges/forgejo/forgejo-client";
import { GithubClient } from "../../github/github-client";
import { scopeOf } from "../../github/scope";
import { outboundLimiter } from "../../lib/outbound-limit";
import { pendingUsageRows } from "../../lib/usage-tally";
import { giteaWebhookUrlFor } from "../../lib/webhook-url";
import { logEvent } from "../../observability/log";
import { monthOf, usageReport } from "../../usage/usage-report";
import { webhookUrlOf } from "../config-checks";
import { diagnose } from "../diagnose";
import type { CredentialFacts, DoctorFacts, EntityFacts, ScaleSetFacts, UsageFacts } from "../facts";
import type { DoctorReport } from "../report";
import { gatherConfig } from "./config-facts";
import { probeForgejoJobs, probeGiteaHook, probeGiteaRunners } from "./forge-probes";
import { probeAppHook, probeEntityHook, probeInstallation, probeRunners } from "./github-probes";
import { probeObject } from "./object-probes";
import { probeProvider } from "./provider-probes";
import { gatherRecovery } from "./recovery-facts";

/**
 * The setup check's adapter: one D1 batch for what is registered and this month's usage, then
 * every outside call at once (GitHub, shims, the scale set objects, the Access team's keys), at
 * most a few connections at a time, each with a short timeout, none started after the deadline;
 * then the rules (diagnose.ts) judge it all. Nothing is written, except what the GitHub client records of
 * GitHub's answers anyway (a 401 marks credentials failing, rate-limit figures).
 */

export interface DoctorOptions {
  /** Limit the report to this scale set and what it stands on. */
  scaleSetId?: string;
  /** The URL the report was asked at: compared with PUBLIC_URL. */
  requestUrl?: string;
  /** For tests: where outside calls go (GitHub, shims, Access). */
  fetch?: typeof fetch;
}

/** Outside calls in flight at once: under Cloudflare's six per invocation, leaving one for D1 and the objects. */
export const DOCTOR_CONNECTIONS = 5;
/** Each GitHub call's own timeout. */
export const GITHUB_PROBE_TIMEOUT_MS = 5_000;
/** No call starts later than this after the report began. */
export const DOCTOR_DEADLINE_MS = 20_000;

/** The report, or null when `scaleSetId` names no scale set. */
export async function runDoctor(env: Env, opts: DoctorOptions = {}): Promise<DoctorReport | null> {
  const started = Date.now();
  const deadline = started + DOCTOR_DEADLINE_MS;
  const all = await readDoctorRows(env.DB, started);
  const rows = opts.scaleSetId === undefined ? all : limitTo(all, opts.scaleSetId);
  if (!rows) return null;
  const outbound = outboundLimiter(DOCTOR_CONNECTIONS, opts.fetch).fetch;
  const recovery = gatherRecovery(env, started);
  const webhookUrl = webhookUrlOf(env.PUBLIC_URL?.trim() || null);

  // Every scale set of an entity counts towards how its jobs arrive, even when the report is limited to one.
  const intakes = new Map<string, EntityFacts["scaleSets"]>();
  for (const s of all.scaleSets) {
    const n = intakes.get(s.entity_id) ?? { webhook: 0, scaleset_api: 0, poll: 0 };
    n[s.intake]++;
    intakes.set(s.entity_id, n);
  }

  const clients = new Map<string, GithubClient>();
  const forgeOf = new Map(rows.credentials.map((c) => [c.id, c.forge]));
  const clientFor = (credentialId: string) => {
    let gh = clients.get(credentialId);
    if (!gh) {
      // Forgejo takes its tokens as `token …` and pays no GitHub budget (as its scale sets' client).
      const forgejo = forgeOf.get(credentialId) === "forgejo";
      gh = new GithubClient({
        env,
        credentialId,
        maxAttempts: 1,
        maxWaitMs: 0,
        timeoutMs: GITHUB_PROBE_TIMEOUT_MS,
        fetch: forgejo ? forgejoFetch(outbound) : outbound,
        ...(forgejo && { budget: null }),
      });
      clients.set(credentialId, gh);
    }
    return gh;
  };
  const usable = new Map(rows.credentials.map((c) => [c.id, c.health !== "failing" && c.bound_api_url !== null]));

  const credentials = Promise.all(
    rows.credentials.map(async (c): Promise<CredentialFacts> => {
      const probeApp = c.auth_type === "app" && usable.get(c.id) && c.installation_id !== null;
      const [installation, appHook] = await Promise.all([
        probeApp ? probeInstallation(clientFor(c.id), c.installation_id!, deadline) : null,
        probeApp && c.has_webhook_secret ? probeAppHook(clientFor(c.id), deadline) : null,
      ]);
      return {
        id: c.id,
        name: c.name,
        authType: c.auth_type,
        appId: c.app_id,
        installationId: c.installation_id,
        endpoint: c.endpoint_name,
        apiBaseUrl: c.api_base_url,
        boundApiUrl: c.bound_api_url,
        health: c.health ?? "ok",
        failureReason: c.failure_reason,
        failedAt: c.failed_at,
        blockedUntil: c.blocked_until,
        hasWebhookSecret: Boolean(c.has_webhook_secret),
        forge: c.forge,
        installation,
        appHook,
      };
    }),
  );

  const appFed = new Set(rows.credentials.filter((c) => c.auth_type === "app" && c.has_webhook_secret).map((c) => c.id));
  const entities = Promise.all(
    rows.entities.map(async (e): Promise<EntityFacts> => {
      const scaleSets = intakes.get(e.id) ?? { webhook: 0, scaleset_api: 0, poll: 0 };
      const ok = usable.get(e.credentials_id) ?? false;
      const scope = scopeOf(e);
      const github = e.forge === "github";
      // A Gitea instance (kind enterprise) has a system hook; Forgejo sends no workflow_job webhooks at all.
      const hookable = github ? scope.kind !== "enterprise" : e.forge === "gitea";
      const wantsHook = ok && webhookUrl !== null && scaleSets.webhook > 0 && !appFed.has(e.credentials_id) && hookable;
      const poolIds = rows.pools.get(e.id) ?? [];
      // The cheap authenticated read that proves the credentials reach the entity's scope, by forge.
      const readScope = (credentialId: string) =>
        e.forge === "gitea"
          ? probeGiteaRunners(clientFor(credentialId), e, deadline)
          : e.forge === "forgejo"
            ? probeForgejoJobs(clientFor(credentialId), e, deadline)
            : probeRunners(clientFor(credentialId), scope, deadline);
      const [runners, hook, pool] = await Promise.all([
        ok ? readScope(e.credentials_id) : null,
        !wantsHook
          ? null
          : github
            ? scope.kind === "enterprise"
              ? null
              : probeEntityHook(clientFor(e.credentials_id), scope, webhookUrl!, deadline)
            : probeGiteaHook(clientFor(e.credentials_id), e, giteaWebhookUrlFor(env.PUBLIC_URL!), deadline),
        // Each pool member reads the entity's runners too: it must be able to mint them.
        Promise.all(
          poolIds.map(async (credentialId) => ({
            credentialId,
            runners: usable.get(credentialId) ? await readScope(credentialId) : null,
          })),
        ),
      ]);
      return {
        id: e.id,
        kind: e.kind,
        forge: e.forge,
        name: e.kind === "repository" ? `${e.owner}/${e.name}` : e.owner,
        owner: e.owner,
        credentialId: e.credentials_id,
        scaleSets,
        lastJobAt: e.last_job_at,
        runners,
        hook,
        pool,
        recovery: (await recovery).byEntity.get(e.id) ?? null,
      };
    }),
  );

  const providers = Promise.all(
    rows.providers.map(async (p) => ({
      id: p.id,
      name: p.name,
      url: p.url,
      capabilities: await probeProvider(env, p, deadline, outbound),
    })),
  );

  const scaleSets = Promise.all(
    rows.scaleSets.map(async (s): Promise<ScaleSetFacts> => {
      const stats = rows.instances.get(s.id);
      return {
        id: s.id,
        name: s.name,
        entityId: s.entity_id,
        providerId: s.provider_id,
        labels: s.labels,
        enabled: s.enabled,
        intake: s.intake,
        minIdleRunners: s.min_idle_runners,
        maxRunners: s.max_runners,
        createdAt: s.created_at,
        instances: { total: stats?.total ?? 0, live: stats?.live ?? 0, idle: stats?.idle ?? 0 },
        cameUp: stats?.came_up ?? false,
        lastFault: rows.lastFaults.get(s.id) ?? null,
        queued: rows.queued.get(s.id) ?? { count: 0, oldestAt: null },
        object: await probeObject(env, s.id, deadline),
      };
    }),
  );

  const config = gatherConfig(env, opts.requestUrl, outbound, deadline);
  const facts: Omit<DoctorFacts, "now"> = {
    config: await config,
    credentials: await credentials,
    entities: await entities,
    providers: await providers,
    scaleSets: await scaleSets,
    unmatched: opts.scaleSetId === undefined ? rows.unmatched : null,
    recovery: (await recovery).recovery,
    // The account's, not a scale set's: in the full report only.
    usage: opts.scaleSetId === undefined ? gatherUsage(env, all.usage, started) : null,
  };
  const report = diagnose({ ...facts, now: Date.now() });
  const count = (status: string) => report.checks.filter((c) => c.status === status).length;
  logEvent({
    event: "doctor_report",
    scale_set: opts.scaleSetId ?? null,
    ok: report.ok,
    failed: report.checks.filter((c) => c.status === "fail").map((c) => c.id),
    warnings: count("warn"),
    skipped: count("skip"),
    duration_ms: Date.now() - started,
  });
  return report;
}

/** This month's usage (D1's rows and what this isolate has not written yet) and the plan the deployment says it is on. */
function gatherUsage(env: Env, rows: DoctorRows["usage"], now: number): UsageFacts {
  const month = monthOf(now);
  return {
    planSetting: env.CLOUDFLARE_PLAN ?? null,
    report: usageReport([...rows, ...pendingUsageRows(month.to)], month.month, now),
  };
}

/** The rows one scale set stands on: itself, its entity, the entity's credentials and pool, its provider. */
function limitTo(rows: DoctorRows, scaleSetId: string): DoctorRows | null {
  const ss = rows.scaleSets.find((s) => s.id === scaleSetId);
  if (!ss) return null;
  const entity = rows.entities.find((e) => e.id === ss.entity_id);
  const credentialIds = new Set(entity ? [entity.credentials_id, ...(rows.pools.get(entity.id) ?? [])] : []);
  return {
    ...rows,
    scaleSets: [ss],
    entities: entity ? [entity] : [],
    credentials: rows.credentials.filter((c) => credentialIds.has(c.id)),
    providers: rows.providers.filter((p) => p.id === ss.provider_id),
  };
}
