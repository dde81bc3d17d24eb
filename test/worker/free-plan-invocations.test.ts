import { createScheduledController } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEFAULT_ENDPOINT } from "../../src/github/default-endpoint";
import worker from "../../src/index";
import { PLAN_BUDGETS, usePlan } from "../../src/lib/invocation-cost";
import { largestInvocations, resetInvocationLedger } from "../../src/lib/invocation-ledger";
import { recoveryObject } from "../../src/recovery/rpc";
import { createTenant } from "../fake-shim/control";
import { clone, exampleFor } from "../fixtures/webhook-examples";
import { createEndpoint, createPatCredential, newWorld } from "./github-helpers";
import { api, readAnswer } from "./helpers";
import { queueJobs, reconcile } from "./scaleset-world";
import { login, ui } from "./ui-helpers";
import { deliver, World } from "./webhook-setup";

/**
 * The Free plan allows 50 subrequests and 50 D1 queries per invocation (lib/invocation-cost.ts
 * PLAN_BUDGETS). A small installation (10 scale sets of up to 20 runners) is walked through every
 * flow it has, on the Free plan's budgets: webhooks, reconciles that fill every scale set, the
 * runners' bootstrap and reports, their deletion, the dashboard, /metrics, the setup check,
 * retention and delivery recovery. Every invocation of every kind must stay within both limits;
 * the largest of each kind is what the invocation ledger kept.
 */

const SETS = 10;
const RUNNERS = 20;
const SECRET = "free-plan-whsec-12345678";
const free = PLAN_BUDGETS.free;

beforeAll(() => {
  usePlan("free");
  resetInvocationLedger();
});
afterAll(() => usePlan("paid"));

async function runner(method: string, path: string, token: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await exports.default.fetch(
    new Request(`https://edgerunner.test/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }),
  );
  return readAnswer(res);
}

describe("a small installation on the Free plan", () => {
  it("takes webhooks for 10 scale sets within the per-invocation limits", async () => {
    // github.com's API is the fake GitHub here (deliveries still come from github.com, no
    // X-GitHub-Enterprise-Host): what this installation asks GitHub later on (recovery, the
    // cron's passes, the setup check) gets real answers, and no call leaves the machine.
    const github = await newWorld();
    await github.seed({
      orgs: ["octo-org"],
      repos: Array.from({ length: SETS }, (_, i) => `octo-org/free-${i}`),
      pats: [{ token: "ghp_test", login: "octocat" }],
    });
    const moved = await api.put(`/api/v1/github/endpoints/${DEFAULT_ENDPOINT}`, { api_base_url: github.url });
    expect(moved.status, moved.text).toBe(200);
    const w = new World("free-plan");
    for (let i = 0; i < SETS; i++) {
      const repo = await w.repository("octo-org", `free-${i}`, SECRET);
      await w.scaleSet("repositories", repo, `free-hooks-${i}`, ["self-hosted", "linux", `free-${i}`], { max_runners: RUNNERS });
      for (let j = 0; j < 3; j++) {
        const p = clone(exampleFor("queued", 289782451).payload);
        p.repository.owner.login = "octo-org";
        p.repository.name = `free-${i}`;
        p.repository.full_name = `octo-org/free-${i}`;
        p.workflow_job.id = 9_100_000 + i * 100 + j;
        p.workflow_job.labels = ["self-hosted", "linux", `free-${i}`];
        expect((await deliver(p, SECRET)).status).toBeLessThan(300);
      }
    }
  });

  it("fills 10 scale sets of 20 runners, bootstraps, reports and deletes them within the per-invocation limits", async () => {
    const github = await newWorld();
    const credentialsId = await createPatCredential(await createEndpoint(github));
    const creds = (await api.get(`/api/v1/github/credentials/${credentialsId}`)).body;
    const repo = await api.post("/api/v1/repositories", {
      owner: "octo",
      name: "app",
      credentials_name: creds.name,
      webhook_secret: SECRET,
    });
    const shimSecret = "free-plan-shim-secret-1";
    const shim = await createTenant(inject("fakeShimUrl"), { secret: shimSecret });
    const provider = await api.post("/api/v1/providers", { name: "free-plan-cloud", url: shim.url, secret: shimSecret });
    const sets: string[] = [];
    for (let i = 0; i < SETS; i++) {
      const ss = await api.post(`/api/v1/repositories/${repo.body.id}/scalesets`, {
        name: `free-${i}`,
        provider_name: provider.body.name,
        labels: ["self-hosted", "linux", `free-set-${i}`],
        max_runners: RUNNERS,
        image: "ubuntu:24.04",
        flavor: "small",
        runner_prefix: "fp",
        // Half mint JIT configs in the pass (GitHub calls in the reconcile), half on boot (in the bootstrap route).
        jit_config_timing: i % 2 ? "before_create" : "on_boot",
      });
      expect(ss.status, ss.text).toBe(201);
      sets.push(ss.body.id);
      await queueJobs(ss.body.id, RUNNERS);
    }
    // What one invocation cannot do is left to the next: reconcile until every scale set is full.
    for (let round = 0; round < 8; round++) {
      for (const id of sets) await reconcile(id);
      if ((await shim.machines()).length >= SETS * RUNNERS) break;
    }
    const machines = await shim.machines();
    expect(machines).toHaveLength(SETS * RUNNERS);

    // One runner per scale set boots, asks for what it needs and reports until it is idle.
    const bySet = new Map<string, (typeof machines)[number]>();
    for (const m of machines) bySet.set(String((m as { pool_id?: string }).pool_id ?? m.name.split("-")[1]), m);
    for (const m of [...bySet.values()]) {
      const token = (m.bootstrap as Record<string, string>)["instance-token"]!;
      expect((await runner("GET", "/metadata/runner-metadata", token)).status).toBe(200);
      await runner("GET", "/metadata/install-script", token);
      await runner("GET", "/metadata/credentials/runner", token);
      for (const status of ["installing", "idle"]) {
        expect((await runner("POST", "/callbacks/status", token, { status, message: `now ${status}` })).status).toBeLessThan(300);
      }
    }

    // The jobs go away (cancelled at GitHub): every runner is surplus, and the reconciles delete them.
    await env.DB.prepare("UPDATE jobs SET status = 'completed', updated_at = ? WHERE status = 'queued'").bind(Date.now()).run();
    for (let round = 0; round < 12; round++) {
      for (const id of sets) await reconcile(id);
      if ((await shim.machines()).length === 0) break;
    }

    // Everything a person or a scraper does besides.
    const { cookie } = await login();
    expect((await ui("GET", "/ui", { cookie: cookie! })).status).toBe(200);
    expect((await ui("GET", `/ui/scalesets/${sets[0]}`, { cookie: cookie! })).status).toBe(200);
    await api.get("/api/v1/scalesets");
    await api.get("/api/v1/instances");
    await api.get("/api/v1/jobs");
    await api.get("/api/v1/usage");
    await exports.default.fetch(
      new Request("https://edgerunner.test/metrics", { headers: { authorization: `Bearer ${env.METRICS_TOKEN}` } }),
    );
    await api.get("/api/v1/doctor");
    await recoveryObject(env).runNow();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), env as never);
  });

  it("kept every invocation of every kind within 50 subrequests and 50 D1 queries", () => {
    const largest = largestInvocations();
    const kinds = largest.map((l) => l.kind);
    // Each flow was measured (a kind missing would pass for nothing).
    for (const kind of [
      "webhook",
      "api",
      "bootstrap",
      "dashboard",
      "metrics",
      "retention",
      "reconcileNow",
      "runnerReport",
      "delivery_recovery",
    ]) {
      expect(kinds, `no ${kind} invocation was measured`).toContain(kind);
    }
    const over = largest
      .filter((l) => l.largest.subrequests > free.subrequests || l.largest.d1Queries > free.d1Queries)
      .map((l) => `${l.kind}: ${l.largest.subrequests} subrequests, ${l.largest.d1Queries} D1 queries`);
    expect(over, "invocations past the Free plan's limits").toEqual([]);
  });
});
