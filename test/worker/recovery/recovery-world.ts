import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { runRecoveryPass } from "../../../src/recovery/recovery-pass";
import type { PassReport } from "../../../src/recovery/rpc";
import { type RecoverySettings, recoverySettings } from "../../../src/recovery/settings";
import type { FakeWorld } from "../../fake-github/control-client";
import { createEndpoint, createPatCredential, newWorld } from "../github-helpers";
import { api, unique } from "../helpers";

/**
 * A repository on its own fake GitHub whose hook (this coordinator's webhook URL, which the fake
 * cannot reach from Node: every delivery fails) GitHub keeps a record of, with a webhook scale set
 * so its jobs matter. Deliveries fail as they would while the coordinator is unreachable.
 */
export const SECRET = "whsec-recovery-12345678";
export const WEBHOOK_URL = "https://edgerunner.test/webhooks/github";

export interface RecoveryWorld {
  github: FakeWorld;
  endpoint: string;
  credentialsId: string;
  entityId: string;
  scaleSetId: string;
  hookId: number;
}

export async function recoveryWorld(
  opts: { kind?: "repository" | "organization"; ghes?: boolean; scope?: string; hook?: boolean } = {},
): Promise<RecoveryWorld> {
  const github = await newWorld();
  const endpoint = await createEndpoint(github, opts.ghes ?? false);
  const credentialsId = await createPatCredential(endpoint);
  const creds = (await api.get(`/api/v1/github/credentials/${credentialsId}`)).body;
  const kind = opts.kind ?? "repository";
  const entity =
    kind === "repository"
      ? await api.post("/api/v1/repositories", { owner: "octo", name: "app", credentials_name: creds.name, webhook_secret: SECRET })
      : await api.post("/api/v1/organizations", { name: "octo", credentials_name: creds.name, webhook_secret: SECRET });
  expect(entity.status, entity.text).toBe(201);
  const scaleSetId = await scaleSetOf(kind === "repository" ? "repositories" : "organizations", entity.body.id);
  let hookId = -1;
  if (opts.hook !== false) {
    const hook = await github.deliverWebhooksTo({
      url: WEBHOOK_URL,
      secret: SECRET,
      scope: opts.scope ?? (kind === "repository" ? "repos/octo/app" : "orgs/octo"),
      enterprise_host: "github.example.test",
    });
    hookId = hook.hook_id!;
  }
  return { github, endpoint, credentialsId, entityId: entity.body.id, scaleSetId, hookId };
}

/**
 * A webhook scale set of the entity's (a provider nobody calls: the tests drive no reconcile), so
 * its jobs can start a runner and recovery looks after it. Returns the scale set's id.
 */
export async function scaleSetOf(
  collection: "repositories" | "organizations" | "enterprises",
  entityId: string,
  labels: string[] = ["self-hosted", "linux"],
): Promise<string> {
  const provider = await api.post("/api/v1/providers", {
    name: unique("shim"),
    url: "http://127.0.0.1:9",
    secret: "a-long-provider-shared-secret",
  });
  const ss = await api.post(`/api/v1/${collection}/${entityId}/scalesets`, {
    name: unique("set"),
    provider_name: provider.body.name,
    labels,
    max_runners: 10,
    image: "ubuntu:24.04",
    flavor: "small",
  });
  expect(ss.status, ss.text).toBe(201);
  return ss.body.id;
}

/** One pass now, with the production settings but for `over`. */
export function pass(over: Partial<RecoverySettings> = {}, now = Date.now()): Promise<PassReport> {
  return runRecoveryPass(env, { ...recoverySettings(env), ...over }, now);
}

/** Jobs played by the world whose every delivery failed (recorded failed at GitHub). */
export async function lostJobs(github: FakeWorld, count: number): Promise<number[]> {
  const jobs = await github.queueJobs({ repository: "octo/app", labels: ["self-hosted", "linux"], count });
  await github.settleDeliveries();
  return jobs.map((j) => j.id);
}

/**
 * Like lostJobs, one at a time `gapMs` apart on the fake's clock, the last a few minutes ago:
 * deliveries GitHub shows apart in time, all past the margin in which it may still list one late.
 */
export async function lostJobsApart(github: FakeWorld, count: number, gapMs: number): Promise<number[]> {
  const ids: number[] = [];
  const first = Date.now() - 5 * 60_000 - count * gapMs;
  for (let i = 0; i < count; i++) {
    await github.setNow(first + i * gapMs);
    ids.push(...(await lostJobs(github, 1)));
  }
  await github.setNow(Date.now());
  return ids;
}

export async function jobsOf(entityId: string): Promise<Record<string, { status: string; scale_set_id: string | null }>> {
  const rows = await env.DB.prepare("SELECT id, status, scale_set_id FROM jobs WHERE entity_id = ? ORDER BY id")
    .bind(entityId)
    .all<{ id: number; status: string; scale_set_id: string | null }>();
  return Object.fromEntries(rows.results.map((r) => [r.id, { status: r.status, scale_set_id: r.scale_set_id }]));
}

export async function recoveriesOf(watchKey: string): Promise<Record<string, any>[]> {
  return (
    await env.DB.prepare("SELECT * FROM delivery_recoveries WHERE watch_key = ? ORDER BY delivered_at, key")
      .bind(watchKey)
      .all<Record<string, any>>()
  ).results;
}

export async function watchRow(key: string): Promise<Record<string, any> | null> {
  return env.DB.prepare("SELECT * FROM delivery_watches WHERE key = ?").bind(key).first<Record<string, any>>();
}

/** The world's REST calls of one operation. */
export async function callsTo(github: FakeWorld, operation: string) {
  return (await github.requests()).filter((r) => r.operation === operation);
}
