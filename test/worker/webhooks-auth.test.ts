import { env, exports } from "cloudflare:workers";
import apiGithubCom from "@octokit/webhooks-examples/api.github.com/index.json";
import { sign } from "@octokit/webhooks-methods";
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_WEBHOOK_BYTES } from "../../src/routes/webhooks";
import { createSession, SESSION_COOKIE } from "../../src/ui/session";
import { clone, exampleFor, ghesWorkflowJobExamples, pingExamples } from "../fixtures/webhook-examples";
import { ADMIN_TOKEN, type ApiResponse, api, call, dumpDb } from "./helpers";
import { counter, deliver, expectRejected, jobRow, newDeliveryId, pendingRejections, World } from "./webhook-setup";

// Authenticity and input checks: every rejected delivery writes nothing; it is counted in memory.

const REPO_SECRET = "repo-secret-octo-example";
const ORG_SECRET = "org-secret-octo";
const OTHER_SECRET = "secret-of-another-repository";
const GHES_SECRET = "ghes-secret-octo-example";
const GHES_HOST = "ghes.corp.example";

const inProgress = () => clone(exampleFor("in_progress", 2832853555).payload); // octo-org/example-workflow

let repoId: string;
let orgId: string;
let ghesRepoId: string;

beforeAll(async () => {
  const world = new World("auth");
  repoId = await world.repository("octo-org", "example-workflow", REPO_SECRET);
  orgId = await world.organization("octo-org", ORG_SECRET);
  await world.repository("Codertocat", "other", OTHER_SECRET);
  await world.endpoint("corp-ghes", GHES_HOST);
  ghesRepoId = await world.repository("octo-org", "example-workflow", GHES_SECRET, "corp-ghes");
});

describe("authentic deliveries", () => {
  it("accepts a delivery signed with the repository's secret", async () => {
    const p = inProgress();
    p.workflow_job.id = 9001;
    const res = await deliver(p, REPO_SECRET);
    expect(res.status, res.text).toBe(200);
    expect((await jobRow(9001))!.entity_id).toBe(repoId);
  });

  it("accepts one signed with the owning organization's secret (an organization hook)", async () => {
    const p = inProgress();
    p.workflow_job.id = 9002;
    const res = await deliver(p, ORG_SECRET);
    expect(res.status, res.text).toBe(200);
    expect((await jobRow(9002))!.entity_id).toBe(orgId);
  });

  it("accepts GitHub's form encoding (payload=…), signed over the raw body", async () => {
    const p = inProgress();
    p.workflow_job.id = 9003;
    const raw = new URLSearchParams({ payload: JSON.stringify(p) }).toString();
    const res = await deliver(null, REPO_SECRET, { raw, contentType: "application/x-www-form-urlencoded" });
    expect(res.status, res.text).toBe(200);
    expect(await jobRow(9003)).not.toBeNull();
  });

  it("checks the signature over the bytes GitHub signed, not over their decoded text", async () => {
    // Decoding drops a leading byte-order mark; the signature covers it.
    const p = inProgress();
    p.workflow_job.id = 9004;
    const res = await deliver(null, REPO_SECRET, { raw: `\uFEFF${JSON.stringify(p)}` });
    expect(res.status, res.text).toBe(200);
    expect(await jobRow(9004)).not.toBeNull();
  });

  it("answers ping with 200 when it is signed by a registered entity", async () => {
    const ping = clone(pingExamples[0]!.payload);
    ping.repository.owner.login = "octo-org";
    ping.repository.name = "example-workflow";
    const before = await dumpDb();
    const res = await deliver(ping, REPO_SECRET, { event: "ping" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ pong: true, entity: { id: repoId, kind: "repository" } });
    expect(await dumpDb()).toEqual(before);
  });

  it("ignores other events with 202 and stores nothing", async () => {
    const push = (apiGithubCom as { name: string; examples: unknown[] }[]).find((d) => d.name === "push")!.examples[0];
    const before = await dumpDb();
    const res = await deliver(push, "whatever-secret", { event: "push" });
    expect(res.status, res.text).toBe(202);
    expect(res.body.ignored).toBe(true);
    expect(await dumpDb()).toEqual(before);
  });
});

describe("GitHub Enterprise Server", () => {
  it.each(ghesWorkflowJobExamples.map((e) => [e.source, e.payload] as const))(
    "takes %s for the entity on the endpoint named by X-GitHub-Enterprise-Host",
    async (source, payload) => {
      const p = clone(payload);
      p.workflow_job.id = 7000 + ghesWorkflowJobExamples.findIndex((e) => e.source === source);
      const res = await deliver(p, GHES_SECRET, {
        headers: { "x-github-enterprise-host": GHES_HOST, "x-github-enterprise-version": "3.5.0" },
      });
      expect(res.status, res.text).toBe(200);
      expect((await jobRow(p.workflow_job.id))!.entity_id).toBe(ghesRepoId);
    },
  );

  it("does not take a GHES delivery signed with the github.com entity's secret", async () => {
    const p = clone(ghesWorkflowJobExamples[0]!.payload);
    await expectRejected(401, "bad_signature", () => deliver(p, REPO_SECRET, { headers: { "x-github-enterprise-host": GHES_HOST } }));
  });

  it("does not take a github.com delivery signed with the GHES entity's secret", async () => {
    await expectRejected(401, "bad_signature", () => deliver(inProgress(), GHES_SECRET));
  });

  it("rejects a delivery from an Enterprise Server it does not know", async () => {
    await expectRejected(401, "unknown_entity", () =>
      deliver(inProgress(), GHES_SECRET, { headers: { "x-github-enterprise-host": "other-ghes.example" } }),
    );
  });
});

describe("rejected deliveries store nothing but a counter", () => {
  it("401 for a wrong signature", async () => {
    const p = inProgress();
    const body = JSON.stringify(p);
    const wrong = await sign(REPO_SECRET, body.replace("Test workflow", "Tampered workflow"));
    const res = await expectRejected(401, "bad_signature", () => deliver(p, REPO_SECRET, { signature: wrong }));
    expect(res.body.error).toBe("unauthorized");
    expect(res.text).not.toContain(REPO_SECRET);
  });

  it("401 for a body changed after signing", async () => {
    const p = inProgress();
    const signature = await sign(REPO_SECRET, JSON.stringify(p));
    p.workflow_job.labels = ["self-hosted"];
    await expectRejected(401, "bad_signature", () => deliver(p, REPO_SECRET, { signature }));
  });

  it("401 for a signature made with another registered entity's secret", async () => {
    await expectRejected(401, "bad_signature", () => deliver(inProgress(), OTHER_SECRET));
  });

  it("401 for a signature that is not sha256=<hex>", async () => {
    await expectRejected(401, "bad_signature", () => deliver(inProgress(), REPO_SECRET, { signature: "sha256=zz" }));
    await expectRejected(401, "bad_signature", () =>
      deliver(inProgress(), REPO_SECRET, { signature: "sha1=0123456789abcdef0123456789abcdef01234567" }),
    );
  });

  it("401 for a delivery about an entity nobody registered", async () => {
    const p = inProgress();
    p.repository.owner.login = "nobody-org";
    p.repository.name = "nothing";
    const res = await expectRejected(401, "unknown_entity", () => deliver(p, REPO_SECRET));
    expect(res.body.details.reason).toMatch(/webhook secret/);
  });

  it("401 for a delivery whose payload names no entity at all", async () => {
    await expectRejected(401, "unknown_entity", () => deliver({ action: "queued", workflow_job: {} }, REPO_SECRET));
  });

  it("401 for a ping signed with the wrong secret", async () => {
    const ping = clone(pingExamples[0]!.payload);
    ping.repository.owner.login = "octo-org";
    ping.repository.name = "example-workflow";
    await expectRejected(401, "bad_signature", () => deliver(ping, OTHER_SECRET, { event: "ping" }));
  });

  it.each(["x-github-event", "x-github-delivery", "x-hub-signature-256"])("400 without %s", async (header) => {
    const res = await expectRejected(400, "missing_headers", () =>
      deliver(inProgress(), REPO_SECRET, header === "x-hub-signature-256" ? { signature: null } : { headers: { [header]: "" } }),
    );
    expect(res.body.details.missing.map((h: string) => h.toLowerCase())).toEqual([header]);
  });

  it("400 for a delivery id that is not one", async () => {
    await expectRejected(400, "invalid_headers", () => deliver(inProgress(), REPO_SECRET, { delivery: "a b" }));
  });

  it("400 for malformed JSON, even when signed", async () => {
    const res = await expectRejected(400, "malformed_json", () => deliver(null, REPO_SECRET, { raw: '{"action": "queued", ' }));
    expect(res.body.error).toBe("malformed JSON body");
    await expectRejected(400, "malformed_json", () => deliver(null, REPO_SECRET, { raw: "[1, 2]" }));
    await expectRejected(400, "malformed_json", () => deliver(null, REPO_SECRET, { raw: "", signature: `sha256=${"0".repeat(64)}` }));
  });

  it("400 for a signed workflow_job payload without the fields intake needs", async () => {
    const p = inProgress();
    delete p.workflow_job.labels;
    const res = await expectRejected(400, "invalid_payload", () => deliver(p, REPO_SECRET));
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: "workflow_job.labels" })]));
  });

  it.each([
    ["60,000 labels", (p: any) => (p.workflow_job.labels = Array.from({ length: 60_000 }, (_, i) => `l${i}`)), "workflow_job.labels"],
    ["101 labels", (p: any) => (p.workflow_job.labels = Array.from({ length: 101 }, (_, i) => `l${i}`)), "workflow_job.labels"],
    ["one label of 900 KiB", (p: any) => (p.workflow_job.labels = ["self-hosted", "x".repeat(900 * 1024)]), "workflow_job.labels.1"],
    ["a label of 257 characters", (p: any) => (p.workflow_job.labels = ["x".repeat(257)]), "workflow_job.labels.0"],
    ["a job name of 1,025 characters", (p: any) => (p.workflow_job.name = "n".repeat(1025)), "workflow_job.name"],
    ["a runner name of 257 characters", (p: any) => (p.workflow_job.runner_name = "r".repeat(257)), "workflow_job.runner_name"],
    ["a conclusion of 65 characters", (p: any) => (p.workflow_job.conclusion = "c".repeat(65)), "workflow_job.conclusion"],
  ])("400 for a signed payload carrying more than GitHub sends (%s), storing nothing", async (_what, change, path) => {
    const p = inProgress();
    change(p);
    const res = await expectRejected(400, "out_of_bounds", () => deliver(p, REPO_SECRET));
    expect(res.body.code).toBe("invalid_body");
    expect(res.body.details.problems).toEqual([expect.objectContaining({ path })]);
    expect(res.body.details.bounds).toMatchObject({ labels: 100, label: 256 });
    expect(res.text.length).toBeLessThan(4096);
  });

  it("accepts a payload at the bounds, and the API, the dashboard and /metrics stay whole", async () => {
    const p = inProgress();
    p.workflow_job.id = 8_800_001;
    p.workflow_job.labels = Array.from({ length: 100 }, (_, i) => `${i}-`.padEnd(256, "x"));
    p.workflow_job.name = "n".repeat(1024);
    p.workflow_job.workflow_name = "w".repeat(1024);
    const res = await deliver(p, REPO_SECRET);
    expect(res.status, res.text).toBe(200);
    const job = (await api.get("/api/v1/jobs?limit=500")).body.jobs.find((j: any) => j.id === 8_800_001);
    expect(job.labels).toHaveLength(100);
    const metrics = await call("GET", "/metrics", undefined, { token: "test-metrics-token" });
    expect(metrics.status).toBe(200);
    expect(metrics.text).not.toContain("x".repeat(100));
    const { cookie } = await createSession(ADMIN_TOKEN);
    const page = await call("GET", "/ui/jobs", undefined, { token: null, headers: { cookie: `${SESSION_COOKIE}=${cookie}` } });
    expect(page.status).toBe(200);
    // The dashboard shows a few labels and short names, not 25 KiB per row.
    expect(page.text).toContain("+ 95 more");
    expect(page.text).not.toContain("n".repeat(300));
    expect(page.text.length).toBeLessThan(100_000);
  });

  it(`413 for a body over ${MAX_WEBHOOK_BYTES} bytes, by Content-Length`, async () => {
    const p = inProgress();
    p.padding = "x".repeat(MAX_WEBHOOK_BYTES);
    const res = await expectRejected(413, "payload_too_large", () => deliver(p, REPO_SECRET));
    expect(res.body.details.limit_bytes).toBe(MAX_WEBHOOK_BYTES);
  });

  it("413 for an oversized body sent without Content-Length, read to its end (kept only to the limit) so the sender reads it", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let pulled = 0;
    const total = 64; // 4 MiB offered
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled++ < total) controller.enqueue(chunk);
        else controller.close();
      },
    });
    await expectRejected(413, "payload_too_large", async (): Promise<ApiResponse> => {
      const res = await exports.default.fetch(
        new Request("https://edgerunner.test/webhooks/github", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-github-event": "workflow_job",
            "x-github-delivery": newDeliveryId(),
            "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
          },
          body,
        }),
      );
      const text = await res.text();
      return { status: res.status, body: JSON.parse(text), text, headers: res.headers };
    });
    // Every chunk pulled, and the stream's end: the 413 went out once the sender was done.
    expect(pulled).toBe(total + 1);
  });

  it("counts rejections by reason in memory, shows them on /metrics at once, and writes them only alongside an accepted delivery", async () => {
    const scrape = async () => {
      const res = await exports.default.fetch(
        new Request("https://edgerunner.test/metrics", { headers: { authorization: "Bearer test-metrics-token" } }),
      );
      const line = (await res.text())
        .split("\n")
        .find((l) => l.startsWith('edgerunner_webhooks_total{outcome="rejected",reason="bad_signature"}'));
      return Number(line?.split(" ").pop() ?? 0);
    };
    const inD1 = await counter("webhook.rejected.bad_signature");
    const shown = await scrape();
    const writes = (await env.DB.prepare("SELECT count(*) AS n FROM counters").first<{ n: number }>())!.n;
    await deliver(inProgress(), OTHER_SECRET);
    await deliver(inProgress(), OTHER_SECRET);
    await deliver(inProgress(), "", { signature: null });
    // Nothing written: the counts wait in this isolate, and /metrics adds them to D1's.
    expect(await counter("webhook.rejected.bad_signature")).toBe(inD1);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM counters").first<{ n: number }>())!.n).toBe(writes);
    expect(await scrape()).toBe(shown + 2);
    // The next accepted delivery carries them to D1 in its own batch.
    const p = inProgress();
    p.workflow_job.id = 9_777;
    expect((await deliver(p, REPO_SECRET)).status).toBe(200);
    expect(await counter("webhook.rejected.bad_signature")).toBe(shown + 2);
    expect(pendingRejections("bad_signature")).toBe(0);
    expect(pendingRejections("missing_headers")).toBe(0);
    expect(await scrape()).toBe(shown + 2);
  });
});
