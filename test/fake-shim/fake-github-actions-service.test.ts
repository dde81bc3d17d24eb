/**
 * The fake GitHub's Actions service (runner scale set API): the registration exchange, scale
 * sets, sessions, the long-poll message queue and a job's way through it to a scale set's JIT
 * runner, and the fault knobs. (Unit project: plain Node against the fake's HTTP server.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorld, runnerSession } from "../fake-github/control-client.ts";
import { type FakeGithub, startFakeGithub } from "../fake-github/server.ts";

let github: FakeGithub;
beforeAll(async () => {
  github = await startFakeGithub();
});
afterAll(() => github.close());

/** A response's JSON, asserting the Actions service's UTF-8 BOM on any body (Response.text() would drop it). */
async function body(res: Response): Promise<any> {
  const bytes = Buffer.from(await res.arrayBuffer());
  if (!bytes.length) return null;
  expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  return JSON.parse(bytes.subarray(3).toString("utf8"));
}

async function setup() {
  const world = await createWorld(github.url);
  await world.seed({
    orgs: ["octo"],
    repos: ["octo/app"],
    pats: [{ token: "ghp_ss" }],
    runner_groups: { "orgs/octo": [{ id: 7, name: "gpu-pool" }] },
  });
  await world.actionsSettings({ poll_wait_ms: 200 });
  const reg = await fetch(`${world.url}/orgs/octo/actions/runners/registration-token`, {
    method: "POST",
    headers: { authorization: "Bearer ghp_ss" },
  });
  const { token: regToken } = (await reg.json()) as { token: string };
  const res = await fetch(`${world.url}/actions/runner-registration`, {
    method: "POST",
    headers: { authorization: `RemoteAuth ${regToken}`, "content-type": "application/json" },
    body: JSON.stringify({ url: "https://github.com/octo", runner_event: "register" }),
  });
  expect(res.status).toBe(200);
  const admin = (await body(res)) as { url: string; token: string };
  const call = async (method: string, path: string, b?: unknown, token = admin.token) => {
    const sep = path.includes("?") ? "&" : "?";
    const r = await fetch(`${admin.url}_apis/${path}${sep}api-version=6.0-preview`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(b !== undefined && { "content-type": "application/json" }) },
      body: b === undefined ? undefined : JSON.stringify(b),
    });
    return { status: r.status, body: await body(r) };
  };
  return { world, admin, regToken, call };
}

async function openSession(call: Awaited<ReturnType<typeof setup>>["call"], name = "linux-ss") {
  const created = await call("POST", "runtime/runnerscalesets", {
    name,
    runnerGroupId: 1,
    labels: [{ name, type: "System" }],
    RunnerSetting: { ephemeral: true, disableUpdate: true },
  });
  expect(created.status).toBe(200);
  const session = await call("POST", `runtime/runnerscalesets/${created.body.id}/sessions`, { ownerName: "edgerunner" });
  expect(session.status).toBe(200);
  return {
    scaleSet: created.body,
    session: session.body as {
      sessionId: string;
      messageQueueUrl: string;
      messageQueueAccessToken: string;
      statistics: Record<string, number>;
    },
  };
}

const poll = async (queueUrl: string, token: string, lastMessageId?: number) => {
  const r = await fetch(`${queueUrl}${lastMessageId ? `?lastMessageId=${lastMessageId}` : ""}`, {
    headers: { authorization: `Bearer ${token}`, accept: "application/json; api-version=6.0-preview", "X-ScaleSetMaxCapacity": "5" },
  });
  return { status: r.status, body: await body(r) };
};

describe("fake Actions service", () => {
  it("exchanges a registration token (RemoteAuth) for the service URL and an admin JWT with an expiry", async () => {
    const { world, admin, regToken } = await setup();
    expect(admin.url).toBe(`${world.url}/_actions/`);
    const claims = JSON.parse(Buffer.from(admin.token.split(".")[1]!, "base64url").toString());
    expect(claims.exp * 1000).toBeGreaterThan(Date.now() + 3500_000);
    const refused = await fetch(`${world.url}/actions/runner-registration`, {
      method: "POST",
      headers: { authorization: `RemoteAuth not-a-token`, "content-type": "application/json" },
      body: JSON.stringify({ url: "https://github.com/octo", runner_event: "register" }),
    });
    expect(refused.status).toBe(401);
    // A registration token for octo does not register octo/app.
    const wrong = await fetch(`${world.ghesUrl}/actions/runner-registration`, {
      method: "POST",
      headers: { authorization: `RemoteAuth ${regToken}`, "content-type": "application/json" },
      body: JSON.stringify({ url: "https://ghes.example/octo/app", runner_event: "register" }),
    });
    expect(wrong.status).toBe(403);
  });

  it("finds runner groups by name, and creates, finds, patches and deletes scale sets", async () => {
    const { call } = await setup();
    expect((await call("GET", "runtime/runnergroups/?groupName=gpu-pool")).body).toMatchObject({
      count: 1,
      value: [{ id: 7, name: "gpu-pool", isDefaultGroup: false }],
    });
    expect((await call("GET", "runtime/runnergroups/?groupName=nope")).body).toMatchObject({ count: 0 });
    const created = await call("POST", "runtime/runnerscalesets", {
      name: "big",
      runnerGroupId: 7,
      labels: [{ name: "big", type: "System" }],
      RunnerSetting: { disableUpdate: true },
    });
    expect(created).toMatchObject({
      status: 200,
      body: { name: "big", runnerGroupId: 7, runnerGroupName: "gpu-pool", labels: [{ name: "big", type: "System" }] },
    });
    expect(created.body.scope).toBeUndefined();
    expect((await call("POST", "runtime/runnerscalesets", { name: "BIG", runnerGroupId: 7 })).body.typeName).toContain(
      "RunnerScaleSetExistsException",
    );
    expect((await call("GET", "runtime/runnerscalesets?runnerGroupId=7&name=big")).body).toMatchObject({
      count: 1,
      value: [{ id: created.body.id }],
    });
    expect((await call("GET", "runtime/runnerscalesets?runnerGroupId=1&name=big")).body).toMatchObject({ count: 0 });
    expect((await call("PATCH", `runtime/runnerscalesets/${created.body.id}`, { runnerGroupId: 1 })).body).toMatchObject({
      runnerGroupId: 1,
      runnerGroupName: "Default",
    });
    expect((await call("DELETE", `runtime/runnerscalesets/${created.body.id}`)).status).toBe(204);
    const gone = await call("GET", `runtime/runnerscalesets/${created.body.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.typeName).toContain("RunnerScaleSetNotFoundException");
    // Admin calls need the api-version and the admin token.
    expect((await call("GET", "runtime/runnerscalesets", undefined, "wrong")).status).toBe(401);
  });

  it("allows one session per scale set (409 while it lives), refreshes its queue token, deletes it", async () => {
    const { call } = await setup();
    const { scaleSet, session } = await openSession(call);
    expect(session.statistics).toMatchObject({ totalAssignedJobs: 0, totalRegisteredRunners: 0 });
    const second = await call("POST", `runtime/runnerscalesets/${scaleSet.id}/sessions`, { ownerName: "other" });
    expect(second.status).toBe(409);
    expect(second.body.typeName).toContain("RunnerScaleSetSessionConflictException");
    const refreshed = await call("PATCH", `runtime/runnerscalesets/${scaleSet.id}/sessions/${session.sessionId}`);
    expect(refreshed.body.messageQueueAccessToken).not.toBe(session.messageQueueAccessToken);
    expect((await poll(session.messageQueueUrl, session.messageQueueAccessToken)).status).toBe(401);
    expect((await poll(session.messageQueueUrl, refreshed.body.messageQueueAccessToken)).status).toBe(202);
    expect((await call("DELETE", `runtime/runnerscalesets/${scaleSet.id}/sessions/${session.sessionId}`)).status).toBe(204);
    expect((await call("PATCH", `runtime/runnerscalesets/${scaleSet.id}/sessions/${session.sessionId}`)).status).toBe(404);
    expect((await call("POST", `runtime/runnerscalesets/${scaleSet.id}/sessions`, { ownerName: "other" })).status).toBe(200);
  });

  it("plays a job through the queue: available, acquired, assigned, started and completed by the scale set's JIT runner", async () => {
    const { world, call } = await setup();
    const { scaleSet, session } = await openSession(call);
    const q = (last?: number) => poll(session.messageQueueUrl, session.messageQueueAccessToken, last);
    const ack = (id: number) =>
      fetch(`${session.messageQueueUrl}/${id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${session.messageQueueAccessToken}` },
      });

    const [job] = await world.queueJobs({ repository: "octo/app", labels: ["linux-ss"] });
    const first = await q();
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      messageType: "RunnerScaleSetJobMessages",
      statistics: { totalAvailableJobs: 1, totalAssignedJobs: 0 },
    });
    const [available] = JSON.parse(first.body.body);
    expect(available).toMatchObject({
      messageType: "JobAvailable",
      repositoryName: "app",
      ownerName: "octo",
      jobDisplayName: job!.name,
      requestLabels: ["linux-ss"],
    });
    expect(available.acquireJobUrl).toContain(`/runnerscalesets/${scaleSet.id}/acquirejobs`);
    // Not acknowledged: it comes back to a poll from the same place.
    expect((await q()).body.messageId).toBe(first.body.messageId);

    // Acquire takes the queue token, not the admin token.
    expect((await call("POST", `runtime/runnerscalesets/${scaleSet.id}/acquirejobs`, [available.runnerRequestId])).status).toBe(401);
    const acquired = await call(
      "POST",
      `runtime/runnerscalesets/${scaleSet.id}/acquirejobs`,
      [available.runnerRequestId, 42],
      session.messageQueueAccessToken,
    );
    expect(acquired.body).toEqual({ count: 1, value: [available.runnerRequestId] });
    expect((await ack(first.body.messageId)).status).toBe(204);
    const second = await q(first.body.messageId);
    expect(JSON.parse(second.body.body).map((i: any) => i.messageType)).toEqual(["JobAssigned"]);
    expect(second.body.statistics).toMatchObject({ totalAvailableJobs: 0, totalAssignedJobs: 1 });
    await ack(second.body.messageId);

    // A runner from the scale set's generatejitconfig connects to GitHub and runs the job.
    const jit = await call("POST", `runtime/runnerscalesets/${scaleSet.id}/generatejitconfig`, { name: "er-ss-1", workFolder: "_work" });
    expect(jit.body.runner).toMatchObject({ name: "er-ss-1", runnerScaleSetId: scaleSet.id });
    expect((await call("POST", `runtime/runnerscalesets/${scaleSet.id}/generatejitconfig`, { name: "er-ss-1" })).body.typeName).toContain(
      "AgentExistsException",
    );
    const files = JSON.parse(atob(jit.body.encodedJITConfig));
    const dotRunner = JSON.parse(atob(files[".runner"]));
    const creds = JSON.parse(atob(files[".credentials"]));
    const gh = runnerSession(dotRunner.serverUrl);
    expect((await gh.connect({ agent_id: dotRunner.agentId, name: "er-ss-1", client_id: creds.data.clientId })).status).toBe(200);
    expect((await call("GET", "distributedtask/pools/0/agents?agentName=er-ss-1")).body).toMatchObject({
      count: 1,
      value: [{ id: jit.body.runner.id }],
    });
    expect((await gh.acquire(dotRunner.agentId)).body).toMatchObject({ id: job!.id });
    const third = await q(second.body.messageId);
    expect(JSON.parse(third.body.body)[0]).toMatchObject({
      messageType: "JobStarted",
      runnerId: jit.body.runner.id,
      runnerName: "er-ss-1",
    });
    await ack(third.body.messageId);
    expect((await gh.complete(dotRunner.agentId, job!.id)).status).toBe(200);
    const fourth = await q(third.body.messageId);
    expect(JSON.parse(fourth.body.body)[0]).toMatchObject({ messageType: "JobCompleted", result: "succeeded", runnerName: "er-ss-1" });
    expect(fourth.body.statistics).toMatchObject({ totalAssignedJobs: 0, totalRegisteredRunners: 0 });
    await ack(fourth.body.messageId);
    expect((await q(fourth.body.messageId)).status).toBe(202);
    expect((await world.actionsState()).pending_messages[scaleSet.id]).toEqual([]);
  });

  it("keeps scale set jobs from other runners, and other jobs from scale set runners", async () => {
    const { world, call } = await setup();
    const { scaleSet } = await openSession(call);
    await world.seed({ runners: [{ scope: "orgs/octo", name: "plain", labels: ["linux-ss"], status: "online" }] });
    const plain = (await world.state()).runners.find((r) => r.name === "plain")!;
    await world.queueJobs({ repository: "octo/app", labels: ["linux-ss"] });
    expect((await runnerSession(world.url).acquire(plain.id)).status).toBe(204);
    const jit = await call("POST", `runtime/runnerscalesets/${scaleSet.id}/generatejitconfig`, { name: "er-ss-2" });
    const files = JSON.parse(atob(jit.body.encodedJITConfig));
    const gh = runnerSession(world.url);
    await gh.connect({ agent_id: jit.body.runner.id, name: "er-ss-2", client_id: JSON.parse(atob(files[".credentials"])).data.clientId });
    // Not acquired yet: not assigned to the scale set, so its runner waits too.
    expect((await gh.acquire(jit.body.runner.id)).status).toBe(204);
  });

  it("fault knobs: session conflict, expired admin and queue tokens, 5xx, a deleted scale set, slow polls", async () => {
    const { world, call } = await setup();
    const created = await call("POST", "runtime/runnerscalesets", { name: "faulty", runnerGroupId: 1 });
    await world.fault({ kind: "session_conflict", path: "/sessions" });
    expect((await call("POST", `runtime/runnerscalesets/${created.body.id}/sessions`, { ownerName: "x" })).status).toBe(409);
    await world.fault({ kind: "server_error", status: 503, path: "/runnerscalesets" });
    expect((await call("GET", `runtime/runnerscalesets/${created.body.id}`)).status).toBe(503);
    const session = (await call("POST", `runtime/runnerscalesets/${created.body.id}/sessions`, { ownerName: "x" })).body;

    await world.expireActionsTokens({ queue: true });
    expect((await poll(session.messageQueueUrl, session.messageQueueAccessToken)).status).toBe(401);
    await world.expireActionsTokens({ admin: true });
    expect((await call("GET", `runtime/runnerscalesets/${created.body.id}`)).status).toBe(401);

    const fresh = await setup();
    const { scaleSet, session: s2 } = await openSession(fresh.call, "slow");
    await fresh.world.fault({ kind: "latency", latency_ms: 300, path: "/_queue/" });
    expect((await poll(s2.messageQueueUrl, s2.messageQueueAccessToken)).status).toBe(202);
    expect((await fresh.world.state()).faults).toEqual([]); // the slow poll took the latency fault
    await fresh.world.deleteRunnerScaleSet(scaleSet.id);
    expect((await poll(s2.messageQueueUrl, s2.messageQueueAccessToken)).status).toBe(401);
    expect((await fresh.call("GET", `runtime/runnerscalesets/${scaleSet.id}`)).status).toBe(404);
    expect((await fresh.world.actionsState()).sessions).toEqual([]);
  });

  it("answers a waiting poll as soon as a message arrives", async () => {
    const { world, call } = await setup();
    await world.actionsSettings({ poll_wait_ms: 10_000 });
    const { session } = await openSession(call);
    const pending = poll(session.messageQueueUrl, session.messageQueueAccessToken);
    await new Promise((r) => setTimeout(r, 50));
    await world.queueJobs({ repository: "octo/app", labels: ["linux-ss"] });
    const got = await pending;
    expect(got.status).toBe(200);
    expect(JSON.parse(got.body.body)[0].messageType).toBe("JobAvailable");
  });
});
