import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sign } from "@octokit/webhooks-methods";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import { clone, exampleFor } from "../fixtures/webhook-examples";
import { jobRow, newDeliveryId, World } from "./webhook-setup";

// After the write, intake nudges the scale set's Durable Object. The job is in D1 before the
// answer; a nudge that fails never fails the delivery.

const SECRET = "repo-secret-nudges";
let gpu: string;
let spare: string;
let doomed: string;

beforeAll(async () => {
  const w = new World("nudge");
  const repo = await w.repository("octo-org", "example-workflow", SECRET);
  gpu = await w.scaleSet("repositories", repo, "gpu", ["gpu", "db-app", "dc-03"]);
  spare = await w.scaleSet("repositories", repo, "spare", ["spare-only"]);
  doomed = await w.scaleSet("repositories", repo, "doomed", ["doomed-label"]);
});

afterEach(() => vi.restoreAllMocks());

const stubFor = (scaleSetId: string) => env.SCALE_SET.get(env.SCALE_SET.idFromName(scaleSetId));

/** Delivers through the worker's fetch handler and waits for its waitUntil work (the nudge). */
async function deliverAndSettle(payload: unknown, workerEnv: Env = env): Promise<{ status: number; body: any }> {
  const body = JSON.stringify(payload);
  const req = new Request("https://edgerunner.test/webhooks/github", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": "workflow_job",
      "x-github-delivery": newDeliveryId(),
      "x-hub-signature-256": await sign(SECRET, body),
    },
    body,
  });
  const ctx = createExecutionContext();
  const res = await worker.fetch(req, workerEnv, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: await res.json() };
}

function job(id: number, action = "in_progress") {
  const p = clone(exampleFor(action, action === "in_progress" ? 2832853555 : 289782451).payload);
  p.repository.owner.login = "octo-org";
  p.repository.name = "example-workflow";
  p.workflow_job.id = id;
  p.workflow_job.labels = ["gpu"];
  return p;
}

const logged = (spy: { mock: { calls: unknown[][] } }, event: string) =>
  spy.mock.calls.map((c) => String(c[0])).filter((line) => line.includes(`"event":"${event}"`));

/**
 * The worker's env with a SCALE_SET namespace that records which objects are addressed
 * and can send one scale set's calls to another object.
 */
function watchedEnv(redirect: Record<string, string> = {}) {
  const addressed: string[] = [];
  const watched = {
    ...env,
    SCALE_SET: {
      idFromName: (name: string) => {
        addressed.push(name);
        return env.SCALE_SET.idFromName(redirect[name] ?? name);
      },
      get: (id: DurableObjectId) => env.SCALE_SET.get(id),
    },
  } as unknown as Env;
  return { env: watched, addressed };
}

describe("nudging the scale set's object", () => {
  it("nudges the matched scale set after recording the job", async () => {
    const w = watchedEnv();
    const res = await deliverAndSettle(job(8001, "queued"), w.env);
    expect(res).toMatchObject({ status: 200, body: { scale_set_id: gpu } });
    expect(w.addressed).toEqual([gpu]);
    // The object took it: bound to its scale set, a wake-up armed.
    expect(await stubFor(gpu).status(gpu)).toMatchObject({ scale_set_id: gpu, next_wake_at: expect.any(String) });
  });

  it("nudges the scale set of our instance that ran the job too", async () => {
    const runner = "edgerunner-spare-1";
    const t = Date.now();
    await env.DB.prepare(
      `INSERT INTO instances (id, name, scale_set_id, status, runner_status, addresses, created_at, updated_at, status_changed_at)
       VALUES (?, ?, ?, 'running', 'idle', '[]', ?, ?, ?)`,
    )
      .bind(crypto.randomUUID(), runner, spare, t, t, t)
      .run();
    const p = job(8002);
    p.workflow_job.runner_name = runner;
    const w = watchedEnv();
    const res = await deliverAndSettle(p, w.env);
    expect(res.body.scale_set_id).toBe(gpu);
    // The job is gpu's, but gpu's demand only shrank; the runner that took it is spare's,
    // which is now one runner short and must hear about it.
    expect(w.addressed).toEqual([spare]);
  });

  it("nudges the job's scale set when the job completes, and not when its own runner starts it", async () => {
    const w = watchedEnv();
    await deliverAndSettle(job(8005, "queued"), w.env);
    await deliverAndSettle(job(8005, "in_progress"), w.env);
    expect(w.addressed).toEqual([gpu]);
    await deliverAndSettle(job(8005, "completed"), w.env);
    expect(w.addressed).toEqual([gpu, gpu]);
  });

  it("does not nudge anything for an unmatched job", async () => {
    const p = job(8003);
    p.workflow_job.labels = ["nothing-serves-this"];
    const spy = vi.spyOn(console, "log");
    const w = watchedEnv();
    const res = await deliverAndSettle(p, w.env);
    expect(res.body).toMatchObject({ status: "in_progress", matched: false });
    expect(w.addressed).toEqual([]);
    expect(logged(spy, "webhook_accepted").map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ job_id: 8003, job: "unmatched", scale_set: null }),
    ]);
  });

  it("logs a routed delivery at debug (its start at info), an unmatched one at info", async () => {
    // A routed job is in D1, in GitHub's delivery log (our answer names its scale set) and in
    // edgerunner_webhooks_total: its line is detail. One no scale set takes needs someone.
    const info = vi.spyOn(console, "log");
    const debug = vi.spyOn(console, "debug");
    const before = process.env.LOG_LEVEL;
    try {
      await deliverAndSettle(job(8006, "queued"));
      expect(logged(info, "webhook_accepted")).toEqual([]);
      expect(logged(debug, "webhook_accepted")).toEqual([]); // below the default level: not written
      process.env.LOG_LEVEL = "debug";
      await deliverAndSettle(job(8007, "queued"));
      expect(logged(info, "webhook_accepted")).toEqual([]);
      expect(logged(debug, "webhook_accepted").map((l) => JSON.parse(l))).toEqual([
        expect.objectContaining({ job_id: 8007, job: "routed", scale_set: gpu, delivery_id: expect.any(String) }),
      ]);
    } finally {
      if (before === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = before;
    }
    const p = job(8008, "queued");
    p.workflow_job.labels = ["nothing-serves-this"];
    await deliverAndSettle(p);
    // A routed job starting names the runner that took it: that one stays at info.
    await deliverAndSettle(job(8009, "in_progress"));
    expect(logged(info, "webhook_accepted").map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ job_id: 8008, job: "unmatched" }),
      expect.objectContaining({ job_id: 8009, job: "routed", action: "in_progress", instance: expect.any(String) }),
    ]);
  });

  it("still accepts the delivery, with the job in D1, when the nudge fails", async () => {
    // The object this scale set's nudge reaches refuses it: it belongs to another scale set.
    await stubFor("someone-else").nudge("someone-else");
    const w = watchedEnv({ [doomed]: "someone-else" });
    const spy = vi.spyOn(console, "log");
    const p = job(8004, "queued");
    p.workflow_job.labels = ["doomed-label"];

    const res = await deliverAndSettle(p, w.env);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ job_id: 8004, scale_set_id: doomed, matched: true });
    expect(await jobRow(8004)).toMatchObject({ status: "queued", scale_set_id: doomed });
    const failures = logged(spy, "nudge_failed").map((l) => JSON.parse(l));
    // Tried three times (stub.ts NUDGE_RETRY_MS), then left to the object's tick.
    const refused = expect.stringMatching(/belongs to scale set someone-else/);
    expect(failures).toEqual([
      expect.objectContaining({ scale_set: doomed, error: refused, retry: true }),
      expect.objectContaining({ scale_set: doomed, error: refused, retry: true }),
      expect.objectContaining({ scale_set: doomed, error: refused, retry: false }),
    ]);
  });
});
