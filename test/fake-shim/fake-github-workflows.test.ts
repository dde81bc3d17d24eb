/**
 * The fake GitHub playing workflows: signed webhooks in GitHub's shapes, runners online only
 * with their JIT identity, assignment by labels to any online idle runner, ephemeral runners gone
 * after their job. (In the unit project: plain Node, a webhook receiver on loopback.)
 */
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorld, type FakeWorld, runnerSession } from "../fake-github/control-client.ts";
import { type FakeGithub, startFakeGithub } from "../fake-github/server.ts";

let github: FakeGithub;
let receiver: Server;
let hookUrl: string;
const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
/** When set, the receiver answers 503 to the first attempt of each delivery (refused ones are not in `received`). */
let refuseFirst = false;
const refused = new Set<string>();

beforeAll(async () => {
  github = await startFakeGithub();
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const guid = String(req.headers["x-github-delivery"]);
      if (refuseFirst && !refused.has(guid)) {
        refused.add(guid);
        res.writeHead(503).end();
        return;
      }
      received.push({ headers: req.headers, body });
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/github`;
});
afterAll(async () => {
  await github.close();
  await new Promise((r) => receiver.close(r));
});

async function jitRunner(world: FakeWorld, name: string, labels: string[]) {
  const res = await fetch(`${world.url}/repos/octo/app/actions/runners/generate-jitconfig`, {
    method: "POST",
    headers: { authorization: "Bearer ghp_wf", "content-type": "application/json" },
    body: JSON.stringify({ name, runner_group_id: 1, labels }),
  });
  expect(res.status).toBe(201);
  const { encoded_jit_config } = (await res.json()) as { encoded_jit_config: string };
  const files = JSON.parse(atob(encoded_jit_config)) as Record<string, string>;
  const dotRunner = JSON.parse(atob(files[".runner"]!));
  const creds = JSON.parse(atob(files[".credentials"]!));
  return { agentId: dotRunner.agentId as number, name, serverUrl: dotRunner.serverUrl as string, clientId: creds.data.clientId as string };
}

const deliveries = (jobId: number) =>
  received.map((r) => ({ ...r, json: JSON.parse(r.body) })).filter((r) => r.json.workflow_job.id === jobId);

describe("fake GitHub: playing workflows", () => {
  it("queues, assigns by labels to an online runner, and reports each step in signed webhooks", async () => {
    const world = await createWorld(github.url);
    await world.seed({ repos: ["octo/app"], pats: [{ token: "ghp_wf" }] });
    await world.deliverWebhooksTo({ url: hookUrl, secret: "wf-secret", enterprise_host: "github.example.test" });
    const gpu = await jitRunner(world, "er-gpu", ["self-hosted", "linux", "gpu"]);
    const cpu = await jitRunner(world, "er-cpu", ["self-hosted", "linux"]);
    expect(gpu.serverUrl).toBe(world.url);
    const gh = runnerSession(gpu.serverUrl);

    // Offline runners get nothing; the JIT identity must match.
    expect((await gh.acquire(gpu.agentId)).status).toBe(404);
    expect((await gh.connect({ agent_id: gpu.agentId, name: gpu.name, client_id: "not-it" })).status).toBe(401);
    expect((await gh.connect({ agent_id: gpu.agentId, name: gpu.name, client_id: gpu.clientId })).status).toBe(200);
    expect((await gh.connect({ agent_id: cpu.agentId, name: cpu.name, client_id: cpu.clientId })).status).toBe(200);

    const [job] = await world.queueJobs({ repository: "octo/app", labels: ["self-hosted", "linux", "gpu"] });
    // The cpu runner lacks the gpu label; the gpu runner takes it.
    expect((await gh.acquire(cpu.agentId)).status).toBe(204);
    const got = await gh.acquire(gpu.agentId);
    expect(got).toMatchObject({ status: 200, body: { id: job!.id, runner_name: "er-gpu" } });
    expect((await gh.acquire(gpu.agentId)).status).toBe(409);
    expect((await gh.complete(gpu.agentId, job!.id)).status).toBe(200);
    expect((await gh.complete(gpu.agentId, job!.id)).status).toBe(409);
    await world.settleDeliveries();

    const hooks = deliveries(job!.id);
    expect(hooks.map((h) => h.json.action)).toEqual(["queued", "in_progress", "completed"]);
    for (const h of hooks) {
      expect(h.headers["x-github-event"]).toBe("workflow_job");
      expect(h.headers["x-github-enterprise-host"]).toBe("github.example.test");
      expect(h.headers["x-hub-signature-256"]).toBe(`sha256=${createHmac("sha256", "wf-secret").update(h.body).digest("hex")}`);
      expect(h.json.repository.full_name).toBe("octo/app");
      expect(h.json.workflow_job.labels).toEqual(["self-hosted", "linux", "gpu"]);
    }
    expect(hooks[0]!.json.workflow_job).toMatchObject({ status: "queued", runner_name: null });
    expect(hooks[1]!.json.workflow_job).toMatchObject({ status: "in_progress", runner_name: "er-gpu", runner_id: gpu.agentId });
    expect(hooks[2]!.json.workflow_job).toMatchObject({ status: "completed", conclusion: "success", runner_name: "er-gpu" });

    // Ephemeral: the runner is gone from GitHub; the job is recorded once.
    expect((await world.state()).runners.map((r) => r.name)).toEqual(["er-cpu"]);
    const rest = (method: string, path: string) =>
      fetch(`${world.url}/repos/octo/app/actions/runners${path}`, { method, headers: { authorization: "Bearer ghp_wf" } });
    const listed = (await (await rest("GET", "")).json()) as { runners: { name: string }[] };
    expect(listed.runners.map((r) => r.name)).toEqual(["er-cpu"]);
    // Removing it again is a 404, which a coordinator takes as done.
    expect((await rest("DELETE", `/${gpu.agentId}`)).status).toBe(404);
    expect((await world.workflowJobs())[0]).toMatchObject({ status: "completed", completions: 2, runner_name: "er-gpu" });
  });

  it("queues a run's jobs under the run id given, and records the labels of the runner that took each", async () => {
    const world = await createWorld(github.url);
    await world.seed({ repos: ["octo/app"], pats: [{ token: "ghp_wf" }] });
    await world.deliverWebhooksTo({ url: hookUrl, secret: "wf-secret" });
    const shape = "edgerunner=4242/cpu=2";
    const runner = await jitRunner(world, "er-shaped", ["self-hosted", shape]);
    const gh = runnerSession(runner.serverUrl);
    expect((await gh.connect({ agent_id: runner.agentId, name: runner.name, client_id: runner.clientId })).status).toBe(200);

    const jobs = await world.queueJobs({ repository: "octo/app", labels: ["self-hosted", shape], count: 2, run_id: 4242 });
    const [alone] = await world.queueJobs({ repository: "octo/app", labels: ["self-hosted"] });
    expect(jobs.map((j) => j.run_id)).toEqual([4242, 4242]);
    expect(alone!.run_id).not.toBe(4242);
    expect(alone!.runner_labels).toBeNull();
    expect((await gh.acquire(runner.agentId)).status).toBe(200);
    const taken = (await world.workflowJobs()).find((j) => j.id === jobs[0]!.id);
    expect(taken).toMatchObject({ status: "in_progress", runner_labels: ["self-hosted", shape] });
    const bad = await fetch(`${world.url}/_fake/workflow-jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ repository: "octo/app", labels: ["x"], run_id: "4242" }),
    });
    expect(bad.status).toBe(400);
  });

  it("delivers every webhook twice with the same GUID when asked, and with retry plays an operator who redelivers until acknowledged", async () => {
    const world = await createWorld(github.url);
    await world.seed({ repos: ["octo/app"], pats: [{ token: "ghp_wf" }] });
    const { hook_id } = await world.deliverWebhooksTo({ url: hookUrl, secret: "wf-secret", duplicate: true, shuffle_ms: 20, retry: true });
    received.length = 0;
    refuseFirst = true;
    const [job] = await world.queueJobs({ repository: "octo/app", labels: ["self-hosted"] });
    await world.settleDeliveries();
    const hooks = deliveries(job!.id);
    expect(hooks).toHaveLength(2);
    expect(hooks[0]!.headers["x-github-delivery"]).toBe(hooks[1]!.headers["x-github-delivery"]);
    // One copy met the 503 and was sent again.
    const made = (await world.webhookDeliveries()).filter((d) => d.job_id === job!.id);
    expect(made.map((d) => d.status)).toEqual([202, 202]);
    expect(made.map((d) => d.attempts).sort()).toEqual([1, 2]);
    // GitHub's record: the two copies (the second a redelivery) and the operator's redelivery of the refused one.
    const record = await world.hookDeliveries({ hook_id: hook_id! });
    expect(record.map((d) => d.status_code).sort()).toEqual([202, 202, 503]);
    expect(record.filter((d) => d.redelivery)).toHaveLength(2);
    expect(new Set(record.map((d) => d.guid)).size).toBe(1);
  });

  it("without retry, a refused delivery is attempted once and stays refused, as GitHub leaves it", async () => {
    const world = await createWorld(github.url);
    await world.seed({ repos: ["octo/app"], pats: [{ token: "ghp_wf" }] });
    await world.deliverWebhooksTo({ url: hookUrl, secret: "wf-secret" });
    received.length = 0;
    refuseFirst = true;
    const [job] = await world.queueJobs({ repository: "octo/app", labels: ["self-hosted"] });
    await world.settleDeliveries();
    expect(deliveries(job!.id)).toEqual([]);
    expect((await world.webhookDeliveries()).map((d) => [d.job_id, d.attempts, d.status])).toEqual([[job!.id, 1, 503]]);
  });
});
