/**
 * The fake GitHub delivers webhooks as GitHub does: one attempt per delivery, recorded by GitHub
 * whatever the answer, and never sent again unless someone asks (the REST attempts route, or the
 * configured delivery's `retry` playing an operator); the configured delivery as one of the
 * world's hooks; the world's hooks each hearing the jobs their scope covers; GitHub's deliveries
 * API paged by cursor. (In the unit project: plain Node, a webhook receiver on loopback.)
 */
import { createHmac, createSign } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createWorld, type FakeWorld } from "../fake-github/control-client.ts";
import { type FakeGithub, startFakeGithub } from "../fake-github/server.ts";

let github: FakeGithub;
let receiver: Server;
let hookUrl: string;
interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
}
let received: Received[] = [];
/** How the receiver answers a delivery: a status, or "hang" (never, until the test ends). */
let answer: (r: Received) => number | "hang" = () => 202;
const hanging: ServerResponse[] = [];

beforeAll(async () => {
  github = await startFakeGithub();
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const form = req.headers["content-type"] === "application/x-www-form-urlencoded";
      const text = form ? new URLSearchParams(body).get("payload")! : body;
      const r: Received = { path: req.url ?? "/", headers: req.headers, body, json: JSON.parse(text) };
      received.push(r);
      const status = answer(r);
      if (status === "hang") hanging.push(res);
      else res.writeHead(status, { "content-type": "text/plain" }).end(`answered ${status}`);
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/github`;
});
afterEach(() => {
  received = [];
  answer = () => 202;
  for (const res of hanging.splice(0)) res.destroy();
});
afterAll(async () => {
  await github.close();
  await new Promise((r) => receiver.close(r));
});

const sign = (secret: string, body: string) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

async function rest(world: FakeWorld, method: string, path: string, token = "ghp_d") {
  const res = await fetch(path.startsWith("http") ? path : `${world.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}` },
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, link: res.headers.get("link") };
}

async function seeded(extra: Parameters<FakeWorld["seed"]>[0] = {}) {
  const world = await createWorld(github.url);
  await world.seed({ repos: ["octo/app", "octo/lib", "solo/tool"], orgs: ["octo"], pats: [{ token: "ghp_d" }], ...extra });
  return world;
}

const jobIds = (rs: Received[]) => rs.map((r) => r.json.workflow_job.id);

describe("fake GitHub: webhook deliveries as GitHub makes them", () => {
  it("makes one attempt: a 500 is recorded failed, listed under status=failure, and a REST redelivery resends it with its GUID", async () => {
    const world = await seeded();
    const { hook_id } = await world.deliverWebhooksTo({ url: hookUrl, secret: "s3cret", scope: "repos/octo/app" });
    answer = (r) => (received.filter((x) => x.headers["x-github-delivery"] === r.headers["x-github-delivery"]).length === 1 ? 500 : 202);
    const [job] = await world.queueJobs({ repository: "octo/app", labels: ["self-hosted"] });
    await world.settleDeliveries();

    expect(received).toHaveLength(1);
    const first = received[0]!;
    expect(first.headers).toMatchObject({
      "x-github-hook-id": String(hook_id),
      "x-github-hook-installation-target-type": "repository",
      "x-hub-signature-256": sign("s3cret", first.body),
    });
    expect((await world.webhookDeliveries()).map((d) => [d.job_id, d.attempts, d.status, d.hook_id, d.app_id, d.dropped])).toEqual([
      [job!.id, 1, 500, hook_id, null, false],
    ]);

    const base = `/repos/octo/app/hooks/${hook_id}/deliveries`;
    const listed = await rest(world, "GET", base);
    expect(listed.body).toEqual([
      expect.objectContaining({ status: "Invalid HTTP Response: 500", status_code: 500, redelivery: false, event: "workflow_job" }),
    ]);
    const failed = listed.body[0];
    expect(failed).toMatchObject({ guid: first.headers["x-github-delivery"], action: "queued", installation_id: null, throttled_at: null });
    expect(first.headers["x-github-hook-installation-target-id"]).toBe(String(failed.repository_id));
    expect((await rest(world, "GET", `${base}?status=failure`)).body.map((d: any) => d.id)).toEqual([failed.id]);
    expect((await rest(world, "GET", `${base}?status=success`)).body).toEqual([]);

    const one = await rest(world, "GET", `${base}/${failed.id}`);
    expect(one.body).toMatchObject({ id: failed.id, url: hookUrl, response: { payload: "answered 500" } });
    expect(one.body.request.headers["x-github-delivery"]).toBe(failed.guid);
    expect(one.body.request.payload.workflow_job.id).toBe(job!.id);
    expect((await rest(world, "GET", `${base}/999999`)).status).toBe(404);

    expect((await rest(world, "POST", `${base}/${failed.id}/attempts`)).status).toBe(202);
    await world.settleDeliveries();
    expect(received.map((r) => [r.headers["x-github-delivery"], r.body, r.headers["x-hub-signature-256"]])).toEqual([
      [failed.guid, first.body, sign("s3cret", first.body)],
      [failed.guid, first.body, sign("s3cret", first.body)],
    ]);
    const after = (await rest(world, "GET", base)).body;
    expect(after.map((d: any) => [d.guid, d.redelivery, d.status])).toEqual([
      [failed.guid, true, "OK"],
      [failed.guid, false, "Invalid HTTP Response: 500"],
    ]);
    expect(after[0].id).toBeGreaterThan(failed.id);
    expect((await world.webhookDeliveries())[0]).toMatchObject({ attempts: 2, status: 202 });
  });

  it("sends a dropped delivery nowhere and records it failed; it can still be redelivered", async () => {
    const world = await seeded();
    await world.deliverWebhooksTo({ url: hookUrl, secret: "s3cret", drop_probability: 1 });
    await world.queueJobs({ repository: "octo/app", labels: ["self-hosted"], count: 2 });
    await world.settleDeliveries();
    expect(received).toEqual([]);
    expect((await world.webhookDeliveries()).map((d) => [d.dropped, d.attempts, d.status])).toEqual([
      [true, 0, 0],
      [true, 0, 0],
    ]);
    const record = await world.hookDeliveries();
    expect(record.map((d) => [d.status, d.status_code])).toEqual([
      ["failed to connect to host", 0],
      ["failed to connect to host", 0],
    ]);
    const again = await world.redeliver(record[1]!.id);
    expect(again).toMatchObject({ redelivery: true, status: "OK", status_code: 202, guid: record[1]!.guid });
    expect(received.map((r) => r.headers["x-github-delivery"])).toEqual([record[1]!.guid]);
  });

  it("records a receiver that does not answer within timeout_ms as timed out, once", async () => {
    const world = await seeded();
    await world.deliverWebhooksTo({ url: hookUrl, secret: "s3cret", timeout_ms: 200 });
    answer = () => "hang";
    await world.queueJobs({ repository: "octo/app", labels: ["self-hosted"] });
    await world.settleDeliveries();
    expect(received).toHaveLength(1);
    expect((await world.hookDeliveries()).map((d) => [d.status, d.status_code, d.response.payload])).toEqual([["timed out", 0, null]]);
    expect((await world.webhookDeliveries()).map((d) => [d.attempts, d.status])).toEqual([[1, 0]]);
  });

  it("a scoped configured delivery is a hook listed like one made through REST, and hears only its scope's jobs", async () => {
    const world = await seeded();
    const repoHook = await world.deliverWebhooksTo({ url: hookUrl, secret: "s3cret", scope: "repos/octo/app" });
    const hooks = (await rest(world, "GET", "/repos/octo/app/hooks")).body;
    expect(hooks).toEqual([
      expect.objectContaining({
        id: repoHook.hook_id,
        active: true,
        events: ["workflow_job"],
        config: expect.objectContaining({ url: hookUrl }),
      }),
    ]);
    const [app] = await world.queueJobs({ repository: "octo/app", labels: ["self-hosted"] });
    await world.queueJobs({ repository: "octo/lib", labels: ["self-hosted"] });
    await world.settleDeliveries();
    expect(jobIds(received)).toEqual([app!.id]);

    // Configured again for the organization: the repository's hook it made is gone, the org's hears octo/*.
    received = [];
    const orgHook = await world.deliverWebhooksTo({ url: hookUrl, secret: "s3cret", scope: "orgs/octo" });
    expect((await rest(world, "GET", "/repos/octo/app/hooks")).body).toEqual([]);
    expect((await rest(world, "GET", "/orgs/octo/hooks")).body.map((h: any) => h.id)).toEqual([orgHook.hook_id]);
    const [lib] = await world.queueJobs({ repository: "octo/lib", labels: ["self-hosted"] });
    await world.queueJobs({ repository: "solo/tool", labels: ["self-hosted"] });
    await world.settleDeliveries();
    expect(jobIds(received)).toEqual([lib!.id]);
    expect(received[0]!.headers["x-github-hook-installation-target-type"]).toBe("organization");

    const refused = await fetch(`${world.url}/_fake/webhook-delivery`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: hookUrl, secret: "s3cret", scope: "repos/octo/nope" }),
    });
    expect(refused.status).toBe(400);
  });

  it("a hook made through REST hears its organization's jobs besides the configured delivery, with the event's GUID, in its content type", async () => {
    const world = await seeded();
    await world.deliverWebhooksTo({ url: hookUrl, secret: "s3cret" });
    const created = await fetch(`${world.url}/orgs/octo/hooks`, {
      method: "POST",
      headers: { authorization: "Bearer ghp_d", "content-type": "application/json" },
      body: JSON.stringify({
        name: "web",
        config: { url: `${hookUrl}?org`, content_type: "form", secret: "org-secret" },
        events: ["workflow_job"],
      }),
    });
    const orgHook = (await created.json()) as { id: number };
    const [inside] = await world.queueJobs({ repository: "octo/lib", labels: ["self-hosted"] });
    const [outside] = await world.queueJobs({ repository: "solo/tool", labels: ["self-hosted"] });
    await world.settleDeliveries();

    const toOrg = received.filter((r) => r.path.endsWith("?org"));
    expect(jobIds(toOrg)).toEqual([inside!.id]);
    const configured = received.filter((r) => !r.path.endsWith("?org"));
    expect(jobIds(configured).sort()).toEqual([inside!.id, outside!.id].sort());
    const org = toOrg[0]!;
    expect(org.headers).toMatchObject({
      "content-type": "application/x-www-form-urlencoded",
      "x-github-hook-id": String(orgHook.id),
      "x-github-hook-installation-target-type": "organization",
      "x-hub-signature-256": sign("org-secret", org.body),
    });
    const same = configured.find((r) => r.json.workflow_job.id === inside!.id)!;
    expect(org.headers["x-github-delivery"]).toBe(same.headers["x-github-delivery"]);
    const listed = (await rest(world, "GET", `/orgs/octo/hooks/${orgHook.id}/deliveries`)).body;
    expect(listed.map((d: any) => d.guid)).toEqual([org.headers["x-github-delivery"]]);
    expect((await world.webhookDeliveries()).filter((d) => d.hook_id === orgHook.id).map((d) => d.job_id)).toEqual([inside!.id]);
  });

  it("an enterprise's hook hears the repositories of its organizations, and no REST listing shows it", async () => {
    const world = await seeded({ enterprise_orgs: { acme: ["octo"] } });
    const { hook_id } = await world.deliverWebhooksTo({ url: hookUrl, secret: "s3cret", scope: "enterprises/acme" });
    const [inside] = await world.queueJobs({ repository: "octo/app", labels: ["self-hosted"] });
    await world.queueJobs({ repository: "solo/tool", labels: ["self-hosted"] });
    await world.settleDeliveries();
    expect(jobIds(received)).toEqual([inside!.id]);
    expect(received[0]!.headers).toMatchObject({
      "x-github-hook-id": String(hook_id),
      "x-github-hook-installation-target-type": "business",
    });
    expect((await world.hookDeliveries({ hook_id: hook_id! })).map((d) => d.status)).toEqual(["OK"]);
  });

  it("pages by cursor, newest first, each delivery exactly once, with links on the world's base (GHES: /api/v3)", async () => {
    const world = await seeded();
    const { hook_id } = await world.deliverWebhooksTo({ url: hookUrl, secret: "s3cret", scope: "repos/octo/app" });
    await world.queueJobs({ repository: "octo/app", labels: ["self-hosted"], count: 7 });
    await world.settleDeliveries();
    for (const base of [world.url, world.ghesUrl]) {
      const seen: number[] = [];
      let next: string | null = `${base}/repos/octo/app/hooks/${hook_id}/deliveries?per_page=3`;
      let pages = 0;
      while (next) {
        const page = await rest(world, "GET", next);
        expect(page.status).toBe(200);
        seen.push(...page.body.map((d: { id: number }) => d.id));
        next = page.link === null ? null : /<([^>]+)>; rel="next"/.exec(page.link)![1]!;
        if (next) expect(next.startsWith(`${base}/repos/octo/app/hooks/${hook_id}/deliveries?per_page=3&cursor=`)).toBe(true);
        pages++;
      }
      expect(pages).toBe(3);
      expect(seen).toHaveLength(7);
      expect(seen).toEqual([...seen].sort((a, b) => b - a));
    }
    expect((await rest(world, "GET", `/repos/octo/app/hooks/${hook_id}/deliveries?cursor=not-a-cursor`)).status).toBe(400);
  });

  it("redelivers only the last 3 days (7 on GHES); needs the installation's hooks permission; a forbidden fault refuses", async () => {
    const world = await seeded({
      apps: [{ id: 41, public_key: readFileSync(new URL("../fixtures/app-key-public.pem", import.meta.url), "utf8") }],
      installations: [
        { id: 4100, app_id: 41, account: "octo" },
        { id: 4101, app_id: 41, account: "octo", permissions: { repository_hooks: "read" } },
      ],
    });
    const { hook_id } = await world.deliverWebhooksTo({ url: hookUrl, secret: "s3cret", scope: "repos/octo/app" });
    await world.queueJobs({ repository: "octo/app", labels: ["self-hosted"] });
    await world.settleDeliveries();
    const base = `/repos/octo/app/hooks/${hook_id}/deliveries`;
    const [delivery] = (await rest(world, "GET", base)).body as { id: number }[];

    const token = async (installation: number) => {
      const res = await fetch(`${world.url}/app/installations/${installation}/access_tokens`, {
        method: "POST",
        headers: { authorization: `Bearer ${appJwt(41)}` },
      });
      return ((await res.json()) as { token: string }).token;
    };
    const without = await rest(world, "GET", base, await token(4100));
    expect([without.status, without.body.message]).toEqual([403, "Resource not accessible by integration"]);
    expect((await rest(world, "GET", base, await token(4101))).status).toBe(200);
    await world.fault({ kind: "forbidden", path: "/deliveries" });
    expect((await rest(world, "GET", base)).status).toBe(403);

    await world.setNow(Date.now() + 3 * 24 * 3600_000 + 60_000);
    expect((await rest(world, "POST", `${base}/${delivery!.id}/attempts`)).status).toBe(422);
    expect((await rest(world, "POST", `${world.ghesUrl}${base}/${delivery!.id}/attempts`)).status).toBe(202);
    await world.settleDeliveries();
    expect(received).toHaveLength(2);
  });
});

function appJwt(appId: number): string {
  const pem = readFileSync(new URL("../fixtures/app-key-pkcs1.pem", import.meta.url), "utf8");
  const now = Math.floor(Date.now() / 1000);
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const input = `${enc({ alg: "RS256", typ: "JWT" })}.${enc({ iat: now - 60, exp: now + 540, iss: String(appId) })}`;
  return `${input}.${createSign("RSA-SHA256").update(input).sign(pem).toString("base64url")}`;
}
