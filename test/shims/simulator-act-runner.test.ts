/**
 * The simulator's machine of a Gitea scale set plays act_runner (shims/simulator/act-runner.ts):
 * against the fake Gitea and a stub of the coordinator's metadata and callback routes, it fetches
 * its registration token, registers ephemeral, takes the one job its labels match, finishes it
 * and reports as GARM's scripts do.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bootRunner, type SimulatedRunner } from "../../shims/simulator/machine.ts";
import { createGiteaWorld, type FakeGiteaWorld } from "../fake-gitea/control-client.ts";
import { type FakeGitea, startFakeGitea } from "../fake-gitea/server.ts";

const TOKEN = "sim-instance-token";
let fake: FakeGitea;
let gitea: FakeGiteaWorld;
let coordinator: Server;
let url: string;
const reports: { route: string; body: any }[] = [];

beforeAll(async () => {
  fake = await startFakeGitea();
  gitea = await createGiteaWorld(fake.url);
  await gitea.seed({ repos: ["octo/app"] });
  coordinator = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.statusCode = 401;
        return res.end();
      }
      const path = req.url ?? "";
      if (path === "/metadata/runner-metadata") {
        res.setHeader("content-type", "application/json");
        return res.end(
          JSON.stringify({
            "callback-url": `${url}/callbacks`,
            jit_config_enabled: false,
            os_type: "linux",
            forge: "gitea",
            forge_url: gitea.url,
            labels: ["ubuntu-latest"],
          }),
        );
      }
      if (path === "/metadata/runner-registration-token/") {
        // What the coordinator would have minted at Gitea for the scale set's repository.
        const mint = await fetch(`${gitea.url}/_fake/state`).then((r) => r.json());
        return res.end(mint.registration_tokens["repos/octo/app"]);
      }
      if (path.startsWith("/callbacks/")) {
        reports.push({ route: path.slice("/callbacks/".length), body: JSON.parse(Buffer.concat(chunks).toString() || "null") });
        return res.end();
      }
      res.statusCode = 404;
      res.end();
    });
  });
  await new Promise<void>((r) => coordinator.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(coordinator.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => coordinator.close(() => r()));
  await fake.close();
});

it("registers at Gitea with the coordinator's registration token, runs one job and exits", async () => {
  // The coordinator mints the token at Gitea; the fake hands out the scope's token.
  await fetch(`${gitea.url}/_fake/seed`, {
    method: "POST",
    body: JSON.stringify({ tokens: [{ token: "admin", login: "a", admin: true }] }),
  });
  await fetch(`${gitea.url}/api/v1/repos/octo/app/actions/runners/registration-token`, {
    method: "POST",
    headers: { authorization: "token admin" },
  });
  const [job] = await gitea.queueJobs("octo/app", ["ubuntu-latest"]);
  const r: SimulatedRunner = {
    tenant: "t",
    name: "edgerunner-gitea-sim",
    provider_id: "p",
    phase: "booting",
    agent_id: null,
    job_id: null,
    created_at: Date.now(),
    server_url: null,
  };
  await bootRunner(
    r,
    { metadataUrl: `${url}/metadata`, token: TOKEN },
    { boot_delay_ms: 0, boot_jitter: 0, job_ms: 5, boot_failure_rate: 0, poll_ms: 5 },
  );
  expect(r).toMatchObject({ phase: "done", job_id: job!.id, server_url: gitea.url });
  const state = await gitea.state();
  expect(state.jobs.find((j) => j.id === job!.id)).toMatchObject({ status: "completed", conclusion: "success", runner_name: r.name });
  // Ephemeral: Gitea dropped the runner after its job.
  expect(state.runners.some((x) => x.id === r.agent_id)).toBe(false);
  const statuses = reports.filter((x) => x.route === "status").map((x) => x.body);
  expect(statuses.at(-1)).toMatchObject({ status: "idle", agent_id: r.agent_id });
  expect(reports.some((x) => x.route === "system-info")).toBe(true);
});
