/**
 * The runner scale set API client against the fake Actions service: the registration exchange
 * and its admin token (held, replaced before expiry, replaced after a 401), BOM-prefixed
 * answers, the message queue, and every failure as the kind the listener acts on.
 */
import { describe, expect, it } from "vitest";
import { ADMIN_REFRESH_MARGIN_MS, AdminTokens } from "../../src/github/actions-service/admin-token";
import { ActionsServiceClient } from "../../src/github/actions-service/client";
import { MAX_ACTIONS_BODY_BYTES } from "../../src/github/actions-service/wire";
import type { GithubScope } from "../../src/github/scope";
import type { ActionsResult, QueueMessage, UnreadableMessage } from "../../src/scaleset/listener/actions-port";
import { client, createEndpoint, createPatCredential, newWorld, TestClock } from "./github-helpers";

const org: GithubScope = { kind: "organization", org: "octo" };

async function setup(opts: { ghes?: boolean; scope?: GithubScope; pollWaitMs?: number } = {}) {
  const world = await newWorld();
  await world.actionsSettings({ poll_wait_ms: opts.pollWaitMs ?? 100 });
  const credentialId = await createPatCredential(await createEndpoint(world, opts.ghes));
  const clock = new TestClock();
  const tokens = new AdminTokens();
  const gh = client(credentialId, clock);
  const svc = new ActionsServiceClient({ gh, scope: opts.scope ?? org, clock, adminTokens: tokens });
  const exchanges = async () => (await world.actionsState()).requests.filter((r) => r.path === "/actions/runner-registration").length;
  return { world, svc, gh, clock, tokens, exchanges };
}

const unwrap = <T>(r: { ok: true; value: T } | { ok: false; error: unknown }): T => {
  if (!r.ok) throw new Error(`expected ok, got ${JSON.stringify(r.error)}`);
  return r.value;
};

/** A polled message that could be read. */
const readable = (r: ActionsResult<QueueMessage | UnreadableMessage | null>): QueueMessage => {
  const m = unwrap(r);
  if (!m || "unreadable" in m) throw new Error(`expected a readable message, got ${JSON.stringify(m)}`);
  return m;
};

describe("Actions service client", () => {
  it.each([
    { label: "github.com", ghes: false },
    { label: "GHES", ghes: true },
  ])("registers a scale set, opens a session and reads job messages ($label)", async ({ ghes }) => {
    const { world, svc } = await setup({ ghes, scope: { kind: "repository", owner: "octo", repo: "app" } });
    // A repository has no runner groups to look up: its runner scale sets go in the default group, id 1.
    expect(await svc.runnerGroupId("Default")).toMatchObject({ ok: false, error: { kind: "not_found" } });
    const group = 1;
    expect(unwrap(await svc.findScaleSet(group, "ss-linux"))).toBeNull();
    const created = unwrap(await svc.createScaleSet({ name: "ss-linux", runnerGroupId: group, labels: ["ss-linux"] }));
    expect(created).toMatchObject({ name: "ss-linux", runnerGroupId: 1, labels: ["ss-linux"] });
    expect(unwrap(await svc.findScaleSet(group, "ss-linux"))).toEqual(created);
    expect(unwrap(await svc.getScaleSet(created.id))).toEqual(created);

    const session = unwrap(await svc.createSession(created.id, "edgerunner"));
    expect(session.statistics).toMatchObject({ totalAssignedJobs: 0 });
    expect(unwrap(await svc.getMessage(session, 0, 5))).toBeNull(); // 202

    const [job] = await world.queueJobs({ repository: "octo/app", labels: ["ss-linux"], name: "build" });
    const msg = readable(await svc.getMessage(session, 0, 5));
    expect(msg.statistics).toMatchObject({ totalAvailableJobs: 1 });
    expect(msg.jobs).toEqual([
      expect.objectContaining({
        type: "JobAvailable",
        repository: "octo/app",
        owner: "octo",
        jobDisplayName: "build",
        requestLabels: ["ss-linux"],
        runnerId: null,
        finishTime: null,
      }),
    ]);
    expect(msg.jobs[0]!.queueTime).toBeGreaterThan(0);
    expect(unwrap(await svc.acquireJobs(created.id, session, [msg.jobs[0]!.runnerRequestId]))).toEqual([msg.jobs[0]!.runnerRequestId]);
    unwrap(await svc.deleteMessage(session, msg.messageId));
    const assigned = readable(await svc.getMessage(session, msg.messageId, 5));
    expect(assigned.jobs.map((j) => j.type)).toEqual(["JobAssigned"]);
    expect(assigned.statistics?.totalAssignedJobs).toBe(1);

    const jit = unwrap(await svc.generateJitConfig(created.id, "er-ss-1"));
    expect(JSON.parse(atob(JSON.parse(atob(jit.encodedJitConfig))[".runner"]))).toMatchObject({
      agentId: jit.runnerId,
      agentName: "er-ss-1",
    });
    expect(unwrap(await svc.findRunner("ER-SS-1"))).toEqual({ id: jit.runnerId, name: "er-ss-1" });
    unwrap(await svc.removeRunner(jit.runnerId));
    unwrap(await svc.removeRunner(jit.runnerId)); // already gone counts as removed
    expect(unwrap(await svc.findRunner("er-ss-1"))).toBeNull();

    unwrap(await svc.deleteSession(created.id, session.sessionId));
    unwrap(await svc.deleteScaleSet(created.id));
    expect(job).toBeDefined();
    // Every admin call carried the api version; the exchange went to the endpoint's API with RemoteAuth.
    const reqs = (await world.actionsState()).requests;
    expect(reqs.filter((r) => r.path.startsWith("/_actions/_apis/")).every((r) => r.query["api-version"] === "6.0-preview")).toBe(true);
    expect(reqs.find((r) => r.path === "/actions/runner-registration")?.body).toEqual({
      url: "https://github.example.test/octo/app",
      runner_event: "register",
    });
  });

  it("holds the admin token, replaces it a minute before it expires, and after a 401", async () => {
    const { world, svc, clock, exchanges } = await setup();
    unwrap(await svc.runnerGroupId("Default"));
    unwrap(await svc.findScaleSet(1, "x"));
    expect(await exchanges()).toBe(1);
    clock.advance(3600_000 - ADMIN_REFRESH_MARGIN_MS + 1_000);
    unwrap(await svc.findScaleSet(1, "x"));
    expect(await exchanges()).toBe(2);
    // The service stops taking it early: one new exchange, and the call goes through.
    await world.expireActionsTokens({ admin: true });
    unwrap(await svc.findScaleSet(1, "x"));
    expect(await exchanges()).toBe(3);
  });

  it("maps failures to the kinds the listener acts on", async () => {
    const { world, svc, gh } = await setup();
    const set = unwrap(await svc.createScaleSet({ name: "kinds", runnerGroupId: 1, labels: ["kinds"] }));
    const session = unwrap(await svc.createSession(set.id, "a"));

    const conflict = await svc.createSession(set.id, "b");
    expect(conflict).toMatchObject({ ok: false, error: { kind: "conflict", status: 409 } });
    expect(!conflict.ok && conflict.error.typeName).toContain("RunnerScaleSetSessionConflictException");
    expect(await svc.createScaleSet({ name: "kinds", runnerGroupId: 1, labels: [] })).toMatchObject({
      ok: false,
      error: { kind: "conflict" },
    });
    expect(await svc.generateJitConfig(set.id, "")).toMatchObject({ ok: false, error: { kind: "permanent", status: 400 } });
    expect(await svc.getScaleSet(999_999)).toMatchObject({ ok: false, error: { kind: "not_found", status: 404 } });
    expect(await svc.refreshSession(set.id, "00000000-0000-0000-0000-000000000000")).toMatchObject({
      ok: false,
      error: { kind: "not_found" },
    });
    expect(await svc.runnerGroupId("no-such-group")).toMatchObject({ ok: false, error: { kind: "not_found" } });

    await world.fault({ kind: "server_error", status: 503, path: "/runnerscalesets" });
    expect(await svc.getScaleSet(set.id)).toMatchObject({ ok: false, error: { kind: "retryable", status: 503 } });

    await world.expireActionsTokens({ queue: true });
    expect(await svc.getMessage(session, 0, 1)).toMatchObject({ ok: false, error: { kind: "unauthorized", status: 401 } });
    expect(await svc.acquireJobs(set.id, session, [1])).toMatchObject({ ok: false, error: { kind: "unauthorized" } });
    const fresh = unwrap(await svc.refreshSession(set.id, session.sessionId));
    expect(unwrap(await svc.getMessage(fresh, 0, 1))).toBeNull();

    // No registration token (the credential cannot act on the entity): the exchange fails as not_found.
    const elsewhere = new ActionsServiceClient({ gh, scope: { kind: "organization", org: "nobody" }, adminTokens: new AdminTokens() });
    expect(await elsewhere.runnerGroupId("Default")).toMatchObject({ ok: false, error: { kind: "not_found" } });
  });

  it("answers retryable when the service cannot be reached", async () => {
    const { svc } = await setup();
    const set = unwrap(await svc.createScaleSet({ name: "net", runnerGroupId: 1, labels: ["net"] }));
    const session = unwrap(await svc.createSession(set.id, "a"));
    const gone = { ...session, messageQueueUrl: "http://127.0.0.1:9/_queue/x" };
    expect(await svc.getMessage(gone, 0, 1)).toMatchObject({ ok: false, error: { kind: "retryable" } });
  });

  it("reads no answer past 1 MiB: a larger one is an error of its own kind, whether its length is declared or not", async () => {
    const { svc, gh, clock, tokens } = await setup();
    const set = unwrap(await svc.createScaleSet({ name: "big", runnerGroupId: 1, labels: ["big"] }));
    const session = unwrap(await svc.createSession(set.id, "a"));
    const over = MAX_ACTIONS_BODY_BYTES + 1;
    const declared = (text: string) => new Response(text, { headers: { "content-length": String(new TextEncoder().encode(text).length) } });
    // No length: a stream that never ends, cut off at the limit.
    const endless = () => new Response(new ReadableStream({ pull: (c) => c.enqueue(new TextEncoder().encode(" ".repeat(64 * 1024))) }));
    let oversized: (url: string) => Response | null = () => null;
    const big: typeof fetch = async (input, init) => oversized(String(input)) ?? fetch(input, init);
    const bounded = new ActionsServiceClient({ gh, scope: org, clock, adminTokens: tokens, fetch: big });

    oversized = (url) => (url.includes("/sessions") ? declared(`{"sessionId":"${"x".repeat(over)}"}`) : null);
    expect(await bounded.refreshSession(set.id, session.sessionId)).toMatchObject({ ok: false, error: { kind: "too_large", status: 200 } });
    oversized = (url) => (url.includes("/generatejitconfig") || url.includes("/acquirejobs") ? endless() : null);
    expect(await bounded.generateJitConfig(set.id, "er-big-1")).toMatchObject({ ok: false, error: { kind: "too_large" } });
    expect(await bounded.acquireJobs(set.id, session, [1])).toMatchObject({ ok: false, error: { kind: "too_large" } });
    // A failure status still says what failed, whatever its body.
    oversized = (url) => (url.includes("/runnerscalesets/") ? new Response(endless().body, { status: 503 }) : null);
    expect(await bounded.getScaleSet(set.id)).toMatchObject({ ok: false, error: { kind: "retryable", status: 503 } });

    // A message too large to read is handed over by its id, so it can be acknowledged; without a readable id it is an error.
    oversized = (url) => (url.includes("/_queue/") ? declared(`{"messageId":9,"padding":"${"x".repeat(over)}"}`) : null);
    expect(await bounded.getMessage(session, 0, 1)).toEqual({
      ok: true,
      value: { messageId: 9, unreadable: `message larger than ${MAX_ACTIONS_BODY_BYTES} bytes` },
    });
    oversized = (url) => (url.includes("/_queue/") ? endless() : null);
    expect(await bounded.getMessage(session, 0, 1)).toMatchObject({ ok: false, error: { kind: "too_large" } });

    // The registration exchange's answer too: no admin token, and no second exchange for the same answer.
    let exchanges = 0;
    oversized = (url) => {
      if (!url.endsWith("/actions/runner-registration")) return null;
      exchanges++;
      return endless();
    };
    const fresh = new ActionsServiceClient({ gh, scope: org, clock, adminTokens: new AdminTokens(), fetch: big });
    expect(await fresh.findScaleSet(1, "big")).toMatchObject({ ok: false, error: { kind: "too_large", status: 200 } });
    expect(exchanges).toBe(1);
  });

  it("hands over a message it cannot read with its id, and its readable items apart from the invalid ones", async () => {
    const { world, svc } = await setup();
    const set = unwrap(await svc.createScaleSet({ name: "odd", runnerGroupId: 1, labels: ["odd"] }));
    const session = unwrap(await svc.createSession(set.id, "a"));
    const notJson = await world.injectMessage(set.id, { body: "not json" });
    expect(await svc.getMessage(session, 0, 1)).toEqual({
      ok: true,
      value: { messageId: notJson, unreadable: "message body is not JSON" },
    });
    unwrap(await svc.deleteMessage(session, notJson));
    const mixed = await world.injectMessage(set.id, {
      items: [
        { messageType: "JobAssigned", runnerRequestId: 5 },
        { messageType: "JobAssigned", requestLabels: "x" },
        { messageType: "New" },
      ],
    });
    const m = readable(await svc.getMessage(session, notJson, 1));
    expect(m).toMatchObject({ messageId: mixed, jobs: [{ runnerRequestId: 5 }], invalid: [{ runnerRequestId: null }], skipped: ["New"] });
    unwrap(await svc.deleteMessage(session, mixed));
    await world.injectMessage(set.id, { text: "<html>busy</html>" });
    expect(await svc.getMessage(session, mixed, 1)).toMatchObject({
      ok: false,
      error: { kind: "permanent", message: "message is not JSON" },
    });
  });
});
