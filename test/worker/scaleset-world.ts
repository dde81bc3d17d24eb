import { env } from "cloudflare:workers";
import { expect, inject } from "vitest";
import { scaleSetObject } from "../../src/scaleset/stub";
import type { FakeWorld } from "../fake-github/control-client";
import { createTenant, type FakeShimTenant } from "../fake-shim/control";
import { createEndpoint, createPatCredential, newWorld } from "./github-helpers";
import { api, unique } from "./helpers";

/** A repository on its own fake GitHub, a fake shim registered as its provider, and a scale set. */
export interface ScaleSetWorld {
  github: FakeWorld;
  shim: FakeShimTenant;
  scaleSetId: string;
  repoId: string;
}

export async function scaleSetWorld(
  shimSecret: string,
  over: Record<string, unknown> = {},
  providerOver: Record<string, unknown> = {},
): Promise<ScaleSetWorld> {
  const github = await newWorld();
  const credentialsId = await createPatCredential(await createEndpoint(github));
  const creds = (await api.get(`/api/v1/github/credentials/${credentialsId}`)).body;
  const repo = await api.post("/api/v1/repositories", {
    owner: "octo",
    name: "app",
    credentials_name: creds.name,
    webhook_secret: "whsec-12345678",
  });
  const shim = await createTenant(inject("fakeShimUrl"), { secret: shimSecret });
  const provider = await api.post("/api/v1/providers", { name: unique("shim"), url: shim.url, secret: shimSecret, ...providerOver });
  const ss = await api.post(`/api/v1/repositories/${repo.body.id}/scalesets`, {
    name: unique("linux"),
    provider_name: provider.body.name,
    labels: ["self-hosted", "linux"],
    max_runners: 10,
    image: "ubuntu:24.04",
    flavor: "small",
    runner_prefix: "er",
    ...over,
  });
  if (ss.status !== 201) throw new Error(ss.text);
  return { github, shim, scaleSetId: ss.body.id, repoId: repo.body.id };
}

/**
 * A repository's scale set in scaleset_api intake on its own fake GitHub (empty polls answered
 * after 50 ms), with the steps tests drive its listener by.
 */
export async function listenerWorld(shimSecret: string, over: Record<string, unknown> = {}) {
  const name = unique("ss").toLowerCase();
  const w = await scaleSetWorld(shimSecret, { name, intake: "scaleset_api", ...over });
  await w.github.actionsSettings({ poll_wait_ms: 50 });
  /** One listener step now, backoff or not; the object's status after it. */
  const listen = () => scaleSetObject(env, w.scaleSetId).listenNow(w.scaleSetId);
  /** Steps until the listener holds a session. */
  const open = async () => {
    for (let i = 0; i < 4 && !(await listen()).listener?.session_open; i++);
    expect((await scaleSetObject(env, w.scaleSetId).status(w.scaleSetId)).listener?.session_open).toBe(true);
  };
  const job = async (id: number) => env.DB.prepare("SELECT * FROM jobs WHERE id = ?").bind(id).first<Record<string, any>>();
  const liveInstances = async () =>
    (
      await env.DB.prepare("SELECT * FROM instances WHERE scale_set_id = ? AND status != 'deleted' ORDER BY name")
        .bind(w.scaleSetId)
        .all<Record<string, any>>()
    ).results;
  return { ...w, name, listen, open, job, liveInstances };
}

let jobSeq = 1_000_000 + Math.floor(Math.random() * 1_000_000) * 10;

/** Jobs routed to the scale set, as webhook intake would have stored them. */
export async function queueJobs(scaleSetId: string, n: number, status = "queued"): Promise<number[]> {
  const ids = Array.from({ length: n }, () => jobSeq++);
  await env.DB.batch(
    ids.map((id) =>
      env.DB.prepare(
        "INSERT INTO jobs (id, run_id, repository, owner, labels, status, scale_set_id, queued_at, created_at, updated_at) VALUES (?, 1, 'octo/app', 'octo', '[\"self-hosted\"]', ?, ?, ?, ?, ?)",
      ).bind(id, status, scaleSetId, Date.now(), Date.now(), Date.now()),
    ),
  );
  return ids;
}

/** Reconciles the scale set now (through the admin API) and returns the object's status. */
export async function reconcile(scaleSetId: string) {
  const res = await api.post(`/api/v1/scalesets/${scaleSetId}/reconcile`);
  if (res.status !== 200) throw new Error(`reconcile: ${res.status} ${res.text}`);
  return res.body;
}

/** Queues `n` jobs and lets the object create their machines; returns each machine's name and instance token. */
export async function createRunners(s: ScaleSetWorld, n = 1): Promise<{ name: string; token: string }[]> {
  const before = new Set((await s.shim.machines()).map((m) => m.name));
  await queueJobs(s.scaleSetId, n);
  await reconcile(s.scaleSetId);
  const machines = (await s.shim.machines()).filter((m) => !before.has(m.name));
  if (machines.length !== n) throw new Error(`the object created ${machines.length} machines, not ${n}`);
  return machines.map((m) => ({ name: m.name, token: (m.bootstrap as Record<string, any>)["instance-token"] }));
}
