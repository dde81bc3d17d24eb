/**
 * What the scale set API listener does with answers it cannot take as they came: job items
 * that fail validation (recorded, logged, counted), messages it cannot read (acknowledged unread
 * after three polls, the error on the scale set's status), answers over the body limit; and the
 * runner group it registers in (a repository's default one, id 1, without a lookup).
 */
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_ACTIONS_BODY_BYTES } from "../../src/github/actions-service/wire";
import { PAYLOAD_BOUNDS } from "../../src/intake/payload";
import { UNREADABLE_MESSAGE_TRIES } from "../../src/scaleset/listener/listener";
import { scaleSetObject } from "../../src/scaleset/stub";
import { ADMIN_TOKEN, api, unique } from "./helpers";
import { parsePrometheus, value } from "./prometheus-parse";
import { listenerWorld } from "./scaleset-world";

const SHIM_SECRET = "scale-set-listener-bounds";

afterEach(() => {
  vi.restoreAllMocks();
});

/** The warn lines the coordinator writes while `fn` runs (in this isolate, the objects' too). */
async function warnings(fn: () => Promise<unknown>): Promise<Record<string, any>[]> {
  const lines: Record<string, any>[] = [];
  vi.spyOn(console, "warn").mockImplementation((line: unknown) => void lines.push(JSON.parse(String(line))));
  try {
    await fn();
  } finally {
    vi.restoreAllMocks();
  }
  return lines;
}

const pending = async (w: Awaited<ReturnType<typeof listenerWorld>>) =>
  Object.values((await w.github.actionsState()).pending_messages)
    .flat()
    .map((m) => m.messageId);

describe("scale set API answers the listener cannot take as they came", () => {
  it("records a job item that fails its schema, logs it at warn, counts it, and shows its problem; the message is acknowledged", async () => {
    const w = await listenerWorld(SHIM_SECRET);
    await w.open();
    const gh = (await w.github.actionsState()).scale_sets[0]!.id;
    const rrid = 8_800_000_000 + Math.floor(Math.random() * 1e6);
    const messageId = await w.github.injectMessage(gh, {
      items: [
        // A field of the wrong type: the item fails its schema.
        {
          messageType: "JobAssigned",
          runnerRequestId: rrid,
          repositoryName: "app",
          ownerName: "octo",
          jobDisplayName: "build",
          workflowRunId: "42",
        },
        // Past the webhook path's bounds: 101 labels.
        {
          messageType: "JobAssigned",
          runnerRequestId: rrid + 1,
          repositoryName: "app",
          ownerName: "octo",
          workflowRunId: 43,
          requestLabels: Array.from({ length: PAYLOAD_BOUNDS.labels + 1 }, (_, i) => `label-${i}`),
        },
        // No usable request id: nothing to key a row by, so a log line and the count only.
        { messageType: "JobStarted", runnerRequestId: "not-a-number", ownerName: "octo" },
      ],
    });
    let status: Awaited<ReturnType<typeof w.listen>> | undefined;
    const warned = await warnings(async () => (status = await w.listen()));

    expect(await pending(w)).not.toContain(messageId);
    expect(status!.listener).toMatchObject({ failures: 0, last_message_id: messageId, invalid_job_items: 3 });
    const row = await w.job(rrid);
    expect(row).toMatchObject({
      source: "scaleset_api",
      entity_id: w.repoId,
      scale_set_id: null,
      status: "queued",
      repository: "octo/app",
      name: "build",
      run_id: 0,
      runner_name: null,
      problem: "queue item failed validation: workflowRunId: Invalid input: expected number, received string",
    });
    expect(await w.job(rrid + 1)).toMatchObject({
      scale_set_id: null,
      run_id: 43,
      labels: "[]",
      problem: "queue item failed validation: requestLabels: Too big: expected array to have <=100 items",
    });

    const invalid = warned.filter((l) => l.event === "listener_job_invalid");
    expect(invalid).toEqual([
      expect.objectContaining({
        scale_set: w.scaleSetId,
        message_id: messageId,
        runner_request_id: rrid,
        message_type: "JobAssigned",
        recorded: true,
        problems: [expect.stringMatching(/^workflowRunId: /)],
      }),
      expect.objectContaining({ runner_request_id: rrid + 1, recorded: true, problems: [expect.stringMatching(/^requestLabels: /)] }),
      expect.objectContaining({
        message_id: messageId,
        runner_request_id: null,
        message_type: "JobStarted",
        recorded: false,
        problems: [expect.stringMatching(/^runnerRequestId: /)],
      }),
    ]);

    // The jobs API and the dashboard show why; an unmatched row adds no runner.
    const listed = await api.get(`/api/v1/jobs?unmatched=true&limit=500`);
    expect(listed.body.jobs.find((j: { id: number }) => j.id === rrid)).toMatchObject({
      source: "scaleset_api",
      matched: false,
      problem: row!.problem,
    });
    expect(await w.liveInstances()).toEqual([]);
    const login = await exports.default.fetch(
      new Request("https://edgerunner.test/ui/login", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
        redirect: "manual",
      }),
    );
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
    const page = await (
      await exports.default.fetch(new Request("https://edgerunner.test/ui/jobs?unmatched=true", { headers: { cookie } }))
    ).text();
    expect(page).toContain("queue item failed validation: workflowRunId");

    // /metrics counts them (the object wrote its counts when it reconciled after the message).
    const scrape = await exports.default.fetch(
      new Request("https://edgerunner.test/metrics", { headers: { authorization: "Bearer test-metrics-token" } }),
    );
    const m = parsePrometheus(await scrape.text());
    expect(value(m, "edgerunner_listener_invalid_total", { scale_set_id: w.scaleSetId, kind: "job_item" })).toBe(3);
  });

  it("acknowledges a message it cannot read after three polls, with the error on the scale set's status, and goes on", async () => {
    const w = await listenerWorld(SHIM_SECRET);
    await w.open();
    const gh = (await w.github.actionsState()).scale_sets[0]!.id;
    const messageId = await w.github.injectMessage(gh, { body: "{not json" });
    const warned = await warnings(async () => {
      for (let i = 1; i < UNREADABLE_MESSAGE_TRIES; i++) {
        const tried = (await w.listen()).listener!;
        expect(tried).toMatchObject({ failures: i, session_open: true, unreadable_messages: 0 });
        expect(tried.last_error).toContain(
          `message ${messageId} is unreadable (try ${i} of ${UNREADABLE_MESSAGE_TRIES}): message body is not JSON`,
        );
        expect(await pending(w)).toContain(messageId);
      }
      const acked = (await w.listen()).listener!;
      expect(acked).toMatchObject({
        failures: 0,
        last_message_id: messageId,
        unreadable_messages: 1,
        last_unreadable: { message_id: messageId, error: expect.stringContaining("message body is not JSON"), at: expect.any(String) },
      });
      expect(acked.last_error).toContain(`message ${messageId} acknowledged unread after ${UNREADABLE_MESSAGE_TRIES} tries`);
      expect(await pending(w)).not.toContain(messageId);
    });
    expect(warned.filter((l) => l.event === "listener_message_unreadable").map((l) => [l.message_id, l.try, l.acknowledged])).toEqual([
      [messageId, 1, false],
      [messageId, 2, false],
      [messageId, 3, true],
    ]);
    // The scale set's status in the admin API says so too.
    const shown = await api.get(`/api/v1/scalesets/${w.scaleSetId}`);
    expect(shown.body.status.listener).toMatchObject({ unreadable_messages: 1, last_unreadable: { message_id: messageId } });

    // The next job goes through as usual.
    await w.github.queueJobs({ repository: "octo/app", labels: [w.name] });
    await w.listen();
    expect((await w.github.actionsState()).jobs[0]!.state).toBe("assigned");
    expect((await w.listen()).listener).toMatchObject({ failures: 0, last_error: null, unreadable_messages: 1 });
  });

  it("acknowledges a malformed envelope the same way", async () => {
    const w = await listenerWorld(SHIM_SECRET);
    await w.open();
    const gh = (await w.github.actionsState()).scale_sets[0]!.id;
    const messageId = await w.github.injectMessage(gh, { envelope: { statistics: "lots" } });
    vi.spyOn(console, "warn").mockImplementation(() => {});
    for (let i = 0; i < UNREADABLE_MESSAGE_TRIES; i++) await w.listen();
    expect(await pending(w)).not.toContain(messageId);
    expect((await scaleSetObject(env, w.scaleSetId).status(w.scaleSetId)).listener?.last_unreadable?.error).toContain("statistics");
  });

  it("reads no message past 1 MiB: a larger one is not acted on, and is acknowledged unread by its id", async () => {
    const w = await listenerWorld(SHIM_SECRET);
    await w.open();
    const gh = (await w.github.actionsState()).scale_sets[0]!.id;
    const rrid = 8_900_000_000 + Math.floor(Math.random() * 1e6);
    const messageId = await w.github.injectMessage(gh, {
      items: [{ messageType: "JobAssigned", runnerRequestId: rrid, repositoryName: "app", ownerName: "octo" }],
      pad_bytes: MAX_ACTIONS_BODY_BYTES,
    });
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const first = (await w.listen()).listener!;
    expect(first.failures).toBe(1);
    expect(first.last_error).toContain(`message larger than ${MAX_ACTIONS_BODY_BYTES} bytes`);
    expect(await w.job(rrid)).toBeNull();
    for (let i = 1; i < UNREADABLE_MESSAGE_TRIES; i++) await w.listen();
    expect(await pending(w)).not.toContain(messageId);
    expect(await w.job(rrid)).toBeNull();
  });
});

describe("the runner group a runner scale set is registered in", () => {
  it("is the default one, id 1, for a repository, without a lookup (a repository has no runner groups)", async () => {
    const w = await listenerWorld(SHIM_SECRET);
    await w.open();
    const gh = await w.github.actionsState();
    expect(gh.scale_sets).toEqual([expect.objectContaining({ name: w.name, runnerGroupId: 1 })]);
    expect(gh.requests.filter((r) => r.path.includes("runnergroups"))).toEqual([]);
    expect(gh.requests.find((r) => r.method === "POST" && r.path.endsWith("/runnerscalesets"))?.body).toMatchObject({ runnerGroupId: 1 });
  });

  it("is refused for a repository's named group, with the reason on the status", async () => {
    const w = await listenerWorld(SHIM_SECRET, { runner_group: "builders" });
    const st = (await w.listen()).listener!;
    expect(st.github_scale_set_id).toBeNull();
    expect(st.last_error).toContain("a repository has no runner groups");
    expect((await w.github.actionsState()).requests).toEqual([]);
  });

  it("is looked up by name for an organization's named group", async () => {
    const w = await listenerWorld(SHIM_SECRET);
    await w.github.seed({ runner_groups: { "orgs/octo": [{ id: 7, name: "builders" }] } });
    const shown = (await api.get(`/api/v1/scalesets/${w.scaleSetId}`)).body;
    const creds = (await api.get(`/api/v1/repositories/${w.repoId}`)).body.credentials_name;
    const org = await api.post("/api/v1/organizations", { name: "octo", credentials_name: creds, webhook_secret: "whsec-12345678" });
    expect(org.status, org.text).toBe(201);
    const name = unique("org-ss").toLowerCase();
    const ss = await api.post(`/api/v1/organizations/${org.body.id}/scalesets`, {
      name,
      provider_name: shown.provider_name,
      labels: ["self-hosted"],
      max_runners: 2,
      image: "ubuntu:24.04",
      flavor: "small",
      intake: "scaleset_api",
      runner_group: "builders",
    });
    expect(ss.status, ss.text).toBe(201);
    for (let i = 0; i < 4 && !(await scaleSetObject(env, ss.body.id).listenNow(ss.body.id)).listener?.session_open; i++);
    const gh = await w.github.actionsState();
    expect(gh.scale_sets).toEqual([expect.objectContaining({ name, runnerGroupId: 7, runnerGroupName: "builders" })]);
    expect(gh.requests.filter((r) => r.path.includes("runnergroups")).map((r) => r.query.groupName)).toEqual(["builders"]);
  });
});
