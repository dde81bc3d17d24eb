/**
 * The fake GitHub delivering as a GitHub App's own webhook: the installation in every payload,
 * the App's secret, the App named in the target headers, and nothing for repositories outside
 * the App's installations; one attempt each, in GitHub's record of the App's deliveries
 * (GET /app/hook/deliveries). (In the unit project: plain Node, a webhook receiver on loopback.)
 */
import { createHmac, createSign } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createWorld } from "../fake-github/control-client.ts";
import { type FakeGithub, startFakeGithub } from "../fake-github/server.ts";

let github: FakeGithub;
let receiver: Server;
let hookUrl: string;
const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
/** The status the receiver answers with. */
let status = 200;

beforeAll(async () => {
  github = await startFakeGithub();
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/github`;
});
afterAll(async () => {
  await github.close();
  await new Promise((r) => receiver.close(r));
});

it("sends each job of an installation's repositories once, with the installation, signed with the App's secret", async () => {
  const world = await createWorld(github.url);
  const publicKey = readFileSync(new URL("../fixtures/app-key-public.pem", import.meta.url), "utf8");
  await world.seed({
    repos: ["octo/app", "elsewhere/tool"],
    apps: [{ id: 31, public_key: publicKey }],
    installations: [
      { id: 3100, app_id: 31, account: "octo" },
      { id: 3200, app_id: 32, account: "elsewhere" },
    ],
  });
  await world.deliverWebhooksTo({ url: hookUrl, secret: "app-31-webhook-secret", app_id: 31 });
  const [inside] = await world.queueJobs({ repository: "octo/app", labels: ["self-hosted"] });
  const [outside] = await world.queueJobs({ repository: "elsewhere/tool", labels: ["self-hosted"] });
  await world.settleDeliveries();

  const got = received.map((r) => ({ ...r, json: JSON.parse(r.body) }));
  expect(got.filter((r) => r.json.workflow_job.id === outside!.id)).toEqual([]);
  const hooks = got.filter((r) => r.json.workflow_job.id === inside!.id);
  expect(hooks).toHaveLength(1);
  const h = hooks[0]!;
  expect(h.json.installation).toEqual({ id: 3100, node_id: Buffer.from("023:IntegrationInstallation3100").toString("base64") });
  expect(h.json.repository.full_name).toBe("octo/app");
  expect(h.headers["x-github-hook-installation-target-type"]).toBe("integration");
  expect(h.headers["x-github-hook-installation-target-id"]).toBe("31");
  expect(h.headers["x-hub-signature-256"]).toBe(`sha256=${createHmac("sha256", "app-31-webhook-secret").update(h.body).digest("hex")}`);
});

function appJwt(appId: number): string {
  const pem = readFileSync(new URL("../fixtures/app-key-pkcs1.pem", import.meta.url), "utf8");
  const now = Math.floor(Date.now() / 1000);
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const input = `${enc({ alg: "RS256", typ: "JWT" })}.${enc({ iat: now - 60, exp: now + 540, iss: String(appId) })}`;
  return `${input}.${createSign("RSA-SHA256").update(input).sign(pem).toString("base64url")}`;
}

it("attempts each delivery once; GitHub's record of the App's webhook shows the failure, and its redelivery resends it", async () => {
  const world = await createWorld(github.url);
  const publicKey = readFileSync(new URL("../fixtures/app-key-public.pem", import.meta.url), "utf8");
  await world.seed({
    repos: ["octo/app"],
    apps: [{ id: 33, public_key: publicKey }],
    installations: [{ id: 3300, app_id: 33, account: "octo" }],
  });
  const configured = await world.deliverWebhooksTo({ url: hookUrl, secret: "app-33-webhook-secret", app_id: 33 });
  expect(configured.hook_id).toBeNull();
  received.length = 0;
  status = 500;
  const [job] = await world.queueJobs({ repository: "octo/app", labels: ["self-hosted"] });
  await world.settleDeliveries();
  status = 200;
  expect(received).toHaveLength(1);
  expect((await world.webhookDeliveries()).map((d) => [d.job_id, d.attempts, d.status, d.app_id, d.hook_id])).toEqual([
    [job!.id, 1, 500, 33, null],
  ]);

  const call = async (method: string, path: string) => {
    const res = await fetch(`${world.url}${path}`, { method, headers: { authorization: `Bearer ${appJwt(33)}` } });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const failures = (await call("GET", "/app/hook/deliveries?status=failure")).body;
  expect(failures).toEqual([expect.objectContaining({ status_code: 500, installation_id: 3300, event: "workflow_job", action: "queued" })]);
  const one = await call("GET", `/app/hook/deliveries/${failures[0].id}`);
  expect(one.body.request.payload.installation.id).toBe(3300);
  expect(one.body.request.headers["x-github-hook-installation-target-id"]).toBe("33");
  expect((await call("POST", `/app/hook/deliveries/${failures[0].id}/attempts`)).status).toBe(202);
  await world.settleDeliveries();
  expect(received.map((r) => r.headers["x-github-delivery"])).toEqual([failures[0].guid, failures[0].guid]);
  expect(
    (await call("GET", "/app/hook/deliveries")).body.map((d: { redelivery: boolean; status: string }) => [d.redelivery, d.status]),
  ).toEqual([
    [true, "OK"],
    [false, "Invalid HTTP Response: 500"],
  ]);
  expect((await call("GET", "/app/hook/deliveries/1")).status).toBe(404);
});
