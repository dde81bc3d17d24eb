import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { runnerPortForScaleSet } from "../../src/scaleset/ports-factory";
import { createGiteaWorld, type FakeGiteaWorld } from "../fake-gitea/control-client";
import type { RecordedGiteaDelivery } from "../fake-gitea/types";
import { createTenant, type FakeShimTenant } from "../fake-shim/control";
import { api, unique } from "./helpers";
import { reconcile } from "./scaleset-world";

// A scale set on a Gitea endpoint, end to end against the fake Gitea: the webhook installed
// through Gitea's API, a queued job's delivery creating a machine, the machine playing act_runner
// (registration token from the metadata route, runner.v1 Register/FetchTask/UpdateTask), the
// completed job's delivery cleaning up; and Gitea's runner API behind the scale set's port.

const SHIM_SECRET = "gitea-shim-secret-0123456789";
const TOKEN = "gitea-admin-token";

let gitea: FakeGiteaWorld;
let shim: FakeShimTenant;
let repoId: string;
let orgId: string;
let instanceId: string;
let scaleSetId: string;
let orgScaleSetId: string;
let instanceScaleSetId: string;

/** Hands the coordinator the deliveries the fake Gitea made since `from` (workerd has no address the fake could post to). */
async function relay(from: number): Promise<{ status: number; body: any }[]> {
  const deliveries: RecordedGiteaDelivery[] = (await gitea.state()).deliveries.slice(from);
  const out = [];
  for (const d of deliveries) {
    const res = await exports.default.fetch(new Request(d.url, { method: "POST", headers: d.headers, body: d.body }));
    out.push({ status: res.status, body: await res.json() });
  }
  return out;
}

const machineCall = (path: string, token: string) =>
  exports.default.fetch(new Request(`https://edgerunner.test/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } }));

beforeAll(async () => {
  gitea = await createGiteaWorld(inject("fakeGiteaUrl"));
  await gitea.seed({ repos: ["octo/app"], orgs: ["octo"], tokens: [{ token: TOKEN, login: "gitea-admin", admin: true }] });
  const endpoint = unique("gitea");
  expect((await api.post("/api/v1/github/endpoints", { name: endpoint, forge: "gitea", base_url: gitea.url })).status).toBe(201);
  const creds = await api.post("/api/v1/github/credentials", {
    name: unique("gitea-token"),
    endpoint,
    auth_type: "pat",
    pat: { oauth2_token: TOKEN },
  });
  expect(creds.status, creds.text).toBe(201);
  const entity = async (path: string, body: Record<string, unknown>) => {
    const res = await api.post(path, { credentials_name: creds.body.name, webhook_secret: unique("gitea-hook-secret"), ...body });
    expect(res.status, res.text).toBe(201);
    return res.body.id as string;
  };
  repoId = await entity("/api/v1/repositories", { owner: "octo", name: "app" });
  orgId = await entity("/api/v1/organizations", { name: "octo" });
  instanceId = await entity("/api/v1/enterprises", { name: "gitea-instance" });
  shim = await createTenant(inject("fakeShimUrl"), { secret: SHIM_SECRET });
  const provider = await api.post("/api/v1/providers", { name: unique("shim"), url: shim.url, secret: SHIM_SECRET });
  const scaleSet = async (path: string, labels: string[]) => {
    const res = await api.post(path, {
      name: unique("gitea"),
      provider_name: provider.body.name,
      labels,
      max_runners: 3,
      image: "u",
      flavor: "s",
    });
    expect(res.status, res.text).toBe(201);
    return res.body.id as string;
  };
  scaleSetId = await scaleSet(`/api/v1/repositories/${repoId}/scalesets`, ["ubuntu-latest"]);
  orgScaleSetId = await scaleSet(`/api/v1/organizations/${orgId}/scalesets`, ["org-only"]);
  instanceScaleSetId = await scaleSet(`/api/v1/enterprises/${instanceId}/scalesets`, ["instance-only"]);
});

describe("Gitea webhooks through Gitea's API", () => {
  it("installs, shows and removes our hook on a repository, an organization and the instance (a system hook)", async () => {
    for (const [path, scope] of [
      [`/api/v1/repositories/${repoId}/webhook`, "repos/octo/app"],
      [`/api/v1/organizations/${orgId}/webhook`, "orgs/octo"],
      [`/api/v1/enterprises/${instanceId}/webhook`, "admin"],
    ] as const) {
      expect((await api.get(path)).status).toBe(404);
      const created = await api.post(path);
      expect(created.status, created.text).toBe(201);
      expect(created.body).toMatchObject({
        url: "https://edgerunner.test/webhooks/gitea",
        events: ["workflow_job"],
        active: true,
        content_type: "json",
      });
      const hook = (await gitea.state()).hooks.find((h) => h.id === created.body.id)!;
      expect(hook).toMatchObject({ scope, type: "gitea", events: ["workflow_job"], active: true });
      expect(hook.config.secret).toMatch(/^gitea-hook-secret/);
      expect(created.text).not.toContain(hook.config.secret!);
      expect((await api.get(path)).text).not.toContain(hook.config.secret!);
      expect(hook.config.is_system_webhook).toBe(scope === "admin" ? "true" : undefined);
      const again = await api.post(path);
      expect([again.status, again.body.id]).toEqual([200, created.body.id]);
      expect((await api.get(path)).body.id).toBe(created.body.id);
      if (scope !== "repos/octo/app") {
        expect((await api.delete(path)).status).toBe(204);
        expect((await gitea.state()).hooks.some((h) => h.id === created.body.id)).toBe(false);
      }
    }
  });
});

describe("a Gitea scale set serving a job", () => {
  it("creates a machine for a queued job, which registers act_runner, runs it, and is cleaned up once completed", async () => {
    const seen = (await gitea.state()).deliveries.length;
    const [job] = await gitea.queueJobs("octo/app", ["ubuntu-latest"]);
    const queued = await relay(seen);
    expect(queued).toEqual([{ status: 200, body: expect.objectContaining({ job_id: job!.id, matched: true, scale_set_id: scaleSetId }) }]);

    await reconcile(scaleSetId);
    const machines = await shim.machines();
    expect(machines).toHaveLength(1);
    const token = (machines[0]!.bootstrap as Record<string, any>)["instance-token"] as string;
    const name = machines[0]!.name;

    // The machine's side, as the act_runner install script does it.
    const meta = await machineCall("/metadata/runner-metadata", token);
    expect(await meta.json()).toMatchObject({ name, jit_config_enabled: false, labels: ["ubuntu-latest"] });
    const script = await (await machineCall("/metadata/install-script", token)).text();
    expect(script).toContain(`INSTANCE_URL='${gitea.url}'`);
    expect(script).toContain("DOWNLOAD_URL='https://dl.gitea.com/act_runner/0.2.13/act_runner-0.2.13-linux-amd64'");
    expect(script).toContain("./act_runner register --no-interactive --ephemeral");
    // A scale set's own binary and checksum replace the default.
    const sha = "ab".repeat(32);
    const set = await api.put(`/api/v1/scalesets/${scaleSetId}`, {
      runner_download_url: "https://mirror.example/act_runner",
      runner_download_sha256: sha,
    });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({ runner_download_url: "https://mirror.example/act_runner", runner_download_sha256: sha });
    const own = await (await machineCall("/metadata/install-script", token)).text();
    expect(own).toContain("DOWNLOAD_URL='https://mirror.example/act_runner'");
    expect(own).toContain(`DOWNLOAD_SHA256='${sha}'`);
    const reg = await machineCall("/metadata/runner-registration-token", token);
    expect(reg.status).toBe(200);
    const registrationToken = await reg.text();
    expect(registrationToken).toBe((await gitea.state()).registration_tokens["repos/octo/app"]);
    const registered = await gitea.runnerCall("Register", {
      name,
      token: registrationToken,
      labels: ["ubuntu-latest"],
      ephemeral: true,
      version: "v0.2.13",
    });
    const { runner } = (await registered.json()) as { runner: { id: number; uuid: string; token: string } };
    expect(registered.status).toBe(200);
    const idle = await exports.default.fetch(
      new Request("https://edgerunner.test/api/v1/callbacks/status", {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ status: "idle", message: "act_runner registered", agent_id: runner.id }),
      }),
    );
    expect(idle.status).toBe(200);
    const task = (await (await gitea.runnerCall("FetchTask", { tasksVersion: "0" }, runner)).json()) as { task?: { id: number } };
    expect(task.task?.id).toBe(job!.id);
    expect((await gitea.runnerCall("UpdateTask", { state: { id: job!.id, result: "RESULT_SUCCESS" } }, runner)).status).toBe(200);
    const later = await relay(seen + 1);
    expect(later.map((r) => [r.status, r.body.status])).toEqual([
      [200, "in_progress"],
      [200, "completed"],
    ]);

    await reconcile(scaleSetId);
    expect(await shim.machines()).toHaveLength(0);
    const inst = await env.DB.prepare("SELECT status, job_id FROM instances WHERE name = ?")
      .bind(name)
      .first<{ status: string; job_id: number }>();
    expect(inst).toMatchObject({ job_id: job!.id });
    expect(["deleting", "deleted"]).toContain(inst!.status);
    // The ephemeral runner left Gitea by itself after its job: nothing for us to remove.
    expect((await gitea.state()).runners.some((r) => r.id === runner.id)).toBe(false);
  });
});

describe("Gitea's runner API behind the scale set's port", () => {
  it("mints registration tokens for a repository, an organization and the whole instance", async () => {
    for (const [id, scope] of [
      [scaleSetId, "repos/octo/app"],
      [orgScaleSetId, "orgs/octo"],
      [instanceScaleSetId, "admin"],
    ] as const) {
      const port = (await runnerPortForScaleSet(env, id))!;
      expect(await port.registrationToken()).toBe((await gitea.state()).registration_tokens[scope]);
    }
  });

  it("lists, finds and removes runners, taking Gitea's 500 for a runner that does not exist as gone", async () => {
    await gitea.seed({
      runners: [
        { name: "edgerunner-kept", scope: "repos/octo/app", labels: ["ubuntu-latest"] },
        { name: "edgerunner-orphan", scope: "repos/octo/app" },
      ],
    });
    const port = (await runnerPortForScaleSet(env, scaleSetId))!;
    const listed = await port.listRunners();
    expect(listed.map((r) => r.name).sort()).toEqual(["edgerunner-kept", "edgerunner-orphan"]);
    const orphan = (await port.findRunnerByName("EDGERUNNER-ORPHAN"))!;
    expect(orphan).toMatchObject({ name: "edgerunner-orphan", busy: false });
    expect(await port.getRunner(orphan.id)).toMatchObject({ id: orphan.id });
    expect(await port.removeRunner(orphan.id)).toBe("removed");
    expect(await port.getRunner(orphan.id)).toBeNull();
    // Gitea answers 500 for it now; listed nowhere, it is gone.
    expect(await port.removeRunner(orphan.id)).toBe("gone");
    await gitea.faults({ missing_runner_status: 404 });
    expect(await port.removeRunner(orphan.id)).toBe("gone");
    expect(await port.findRunnerByName("edgerunner-orphan")).toBeNull();
    await expect(port.createJitRunner({ name: "x", labels: [], runnerGroup: "" })).rejects.toThrow(/no just-in-time/);
  });

  it("reads a job's status for the stale-job re-check, null for a job Gitea does not show", async () => {
    const [job] = await gitea.queueJobs("octo/app", ["nobody-serves-this"]);
    const port = (await runnerPortForScaleSet(env, scaleSetId))!;
    expect(await port.jobStatus("octo/app", job!.id)).toEqual({ status: "queued", conclusion: null });
    expect(await port.jobStatus("octo/app", 999_999_999)).toBeNull();
  });

  it("sends the token as Gitea documents it (Authorization: token …)", async () => {
    const requests = (await gitea.state()).requests;
    expect(requests.length).toBeGreaterThan(0);
    expect(new Set(requests.map((r) => r.scheme))).toEqual(new Set(["token"]));
  });
});
