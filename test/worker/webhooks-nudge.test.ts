import { sign } from "@octokit/webhooks-methods";
import { createExecutionContext, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import type { Env } from "../../src/env";
import { NUDGE_MIN_INTERVAL_MS } from "../../src/scaleset/scaleset-object";
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

describe("nudging the scale set's object", () => {
  it("nudges the matched scale set after recording the job, arming its alarm", async () => {
    const before = Date.now();
    const res = await deliverAndSettle(job(8001));
    expect(res).toMatchObject({ status: 200, body: { scale_set_id: gpu } });
    const seen = await runInDurableObject(stubFor(gpu), async (_obj, state) => ({
      bound: await state.storage.get<string>("scale_set_id"),
      nudgedAt: await state.storage.get<number>("last_nudge_at"),
      alarm: await state.storage.getAlarm(),
      alarmRanAt: await state.storage.get<number>("last_alarm_at"),
    }));
    expect(seen.bound).toBe(gpu);
    expect(seen.nudgedAt).toBeGreaterThanOrEqual(before);
    // Armed at once: either still pending or already run.
    expect(seen.alarm !== null || seen.alarmRanAt !== undefined).toBe(true);
    // The alarm does nothing harmful until reconciliation exists.
    await runDurableObjectAlarm(stubFor(gpu));
    expect(await runInDurableObject(stubFor(gpu), (_o, s) => s.storage.get<number>("last_alarm_at"))).toBeGreaterThanOrEqual(before);
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
    expect(await runInDurableObject(stubFor(spare), (_o, s) => s.storage.get<number>("last_nudge_at"))).toBeUndefined();
    const res = await deliverAndSettle(p);
    expect(res.body.scale_set_id).toBe(gpu);
    // The job is gpu's; the runner that took it is spare's, which must hear about it too.
    expect(await runInDurableObject(stubFor(spare), (_o, s) => s.storage.get<number>("last_nudge_at"))).toBeGreaterThanOrEqual(t);
  });

  it("does not nudge anything for an unmatched job", async () => {
    const p = job(8003);
    p.workflow_job.labels = ["nothing-serves-this"];
    const spy = vi.spyOn(console, "log");
    const res = await deliverAndSettle(p);
    expect(res.body).toMatchObject({ status: "in_progress", matched: false });
    expect(logged(spy, "scale_set_nudged")).toEqual([]);
    expect(logged(spy, "webhook_accepted").map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ job_id: 8003, job: "unmatched", scale_set: null }),
    ]);
  });

  it("still accepts the delivery, with the job in D1, when the nudge fails", async () => {
    // This scale set's object refuses every nudge: it is bound to another scale set.
    await stubFor(doomed).bind("someone-else");
    const spy = vi.spyOn(console, "log");
    const p = job(8004, "queued");
    p.workflow_job.labels = ["doomed-label"];

    const res = await deliverAndSettle(p);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ job_id: 8004, scale_set_id: doomed, matched: true });
    expect(await jobRow(8004)).toMatchObject({ status: "queued", scale_set_id: doomed });
    const failures = logged(spy, "scale_set_nudge_failed").map((l) => JSON.parse(l));
    expect(failures).toEqual([
      expect.objectContaining({ scale_set: doomed, job_id: 8004, error: expect.stringMatching(/belongs to scale set someone-else/) }),
    ]);
    expect(await runInDurableObject(stubFor(doomed), (_o, s) => s.storage.get("last_nudge_at"))).toBeUndefined();
  });

  it("arms one alarm for a burst of nudges, no sooner than the interval after the last run", async () => {
    const stub = stubFor("burst-scale-set");
    // As if an alarm had just run (dated ahead so real timers cannot fire it during the test).
    const lastRun = Date.now() + 60_000;
    await runInDurableObject(stub, (_o, s) => s.storage.put("last_alarm_at", lastRun));
    for (let i = 1; i <= 5; i++) await stub.nudge("burst-scale-set", { job_id: i, status: "queued" });
    expect(await runInDurableObject(stub, (_o, s) => s.storage.getAlarm())).toBe(lastRun + NUDGE_MIN_INTERVAL_MS);
  });

  it("brings a later alarm forward", async () => {
    const stub = stubFor("later-scale-set");
    await stub.bind("later-scale-set");
    await runInDurableObject(stub, (_o, s) => s.storage.setAlarm(Date.now() + 3_600_000));
    const before = Date.now();
    await stub.nudge("later-scale-set", { job_id: 1, status: "queued" });
    const { armed, ran } = await runInDurableObject(stub, async (_o, s) => ({
      armed: await s.storage.getAlarm(),
      ran: await s.storage.get<number>("last_alarm_at"),
    }));
    // Due now: still pending, or (real timers) already run.
    if (armed === null) expect(ran).toBeGreaterThanOrEqual(before);
    else expect(armed).toBeLessThanOrEqual(Date.now());
  });

  it("skips nudges while the object's alarm is known to be due later", async () => {
    const quiet = await (async () => {
      const w = new World("nudge-quiet");
      const repo = await w.repository("octo-org", "quiet", SECRET);
      return w.scaleSet("repositories", repo, "quiet", ["quiet-label"]);
    })();
    // As if the object's alarm had just run: the next one is due NUDGE_MIN_INTERVAL_MS after it.
    const lastRun = Date.now() + 60_000;
    await runInDurableObject(stubFor(quiet), (_o, s) => s.storage.put("last_alarm_at", lastRun));
    let calls = 0;
    const counting = {
      ...env,
      SCALE_SET: {
        idFromName: (name: string) => env.SCALE_SET.idFromName(name),
        get: (id: DurableObjectId) => {
          calls++;
          return env.SCALE_SET.get(id);
        },
      },
    } as unknown as Env;
    const send = (id: number) => {
      const p = job(id, "queued");
      p.repository.name = "quiet";
      p.workflow_job.labels = ["quiet-label"];
      return deliverAndSettle(p, counting);
    };
    for (let i = 0; i < 4; i++) expect((await send(8100 + i)).body.scale_set_id).toBe(quiet);
    expect(calls).toBe(1);
    expect(await runInDurableObject(stubFor(quiet), (_o, s) => s.storage.getAlarm())).toBe(lastRun + NUDGE_MIN_INTERVAL_MS);
    for (let i = 0; i < 4; i++) expect(await jobRow(8100 + i)).toMatchObject({ status: "queued", scale_set_id: quiet });
  });
});
