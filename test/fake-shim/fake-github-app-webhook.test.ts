/**
 * The fake GitHub delivering as a GitHub App's own webhook: the installation in every payload,
 * the App's secret, the App named in the target headers, and nothing for repositories outside
 * the App's installations. (In the unit project: plain Node, a webhook receiver on loopback.)
 */
import { createHmac } from "node:crypto";
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

beforeAll(async () => {
  github = await startFakeGithub();
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end();
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
