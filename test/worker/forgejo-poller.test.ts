/**
 * A Forgejo scale set (intake poll) against the fake Forgejo: its object polls the scope's
 * waiting jobs, takes each matching job once, registers one ephemeral runner per job with the
 * job's handle (sealed registration, handle on the instance), and lets go of runners whose job
 * left the queue; Forgejo runners are deleted only when they never took a job.
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { keyringFor } from "../../src/crypto/keyring";
import { open } from "../../src/crypto/secret-box";
import { secretContext } from "../../src/crypto/secret-contexts";
import { mintInstanceToken } from "../../src/scaleset/runner/instance-token";
import { scaleSetObject } from "../../src/scaleset/stub";
import { createTenant } from "../fake-shim/control";
import { api, call, inScaleSetObject, unique } from "./helpers";
import { login, ui } from "./ui-helpers";

const SHIM_SECRET = "forgejo-poller-shim-secret";
const TOKEN = "forgejo-access-token";

interface FakeForgejoWorld {
  url: string;
  api_url: string;
}

async function control<T = any>(world: FakeForgejoWorld, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${world.url}/_fake${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A Forgejo endpoint (written as such in D1: the endpoint API's `forge` is another branch's), a token, a repository entity. */
async function forgejoEntity() {
  const world = (await (await fetch(`${inject("fakeForgejoUrl")}/_fake/worlds`, { method: "POST" })).json()) as FakeForgejoWorld;
  await control(world, "POST", "/tokens", { token: TOKEN });
  const endpoint = unique("forgejo");
  const ep = await api.post("/api/v1/github/endpoints", { name: endpoint, base_url: world.url, api_base_url: world.api_url });
  if (ep.status !== 201) throw new Error(ep.text);
  await env.DB.prepare("UPDATE github_endpoints SET forge = 'forgejo' WHERE name = ?").bind(endpoint).run();
  const cred = await api.post("/api/v1/github/credentials", {
    name: unique("fj"),
    endpoint,
    auth_type: "pat",
    pat: { oauth2_token: TOKEN },
  });
  if (cred.status !== 201) throw new Error(cred.text);
  const repo = await api.post("/api/v1/repositories", {
    owner: "acme",
    name: "app",
    credentials_name: cred.body.name,
    webhook_secret: "unused-12345678",
  });
  if (repo.status !== 201) throw new Error(repo.text);
  const shim = await createTenant(inject("fakeShimUrl"), { secret: SHIM_SECRET });
  const provider = await api.post("/api/v1/providers", { name: unique("shim"), url: shim.url, secret: SHIM_SECRET });
  return {
    world,
    endpoint,
    credentialsName: cred.body.name as string,
    repoId: repo.body.id as string,
    providerName: provider.body.name as string,
    shim,
  };
}

async function forgejoScaleSet(over: Record<string, unknown> = {}) {
  const e = await forgejoEntity();
  const ss = await api.post(`/api/v1/repositories/${e.repoId}/scalesets`, {
    name: unique("fj"),
    provider_name: e.providerName,
    labels: ["linux"],
    max_runners: 10,
    image: "debian:12",
    flavor: "small",
    runner_prefix: "fj",
    ...over,
  });
  if (ss.status !== 201) throw new Error(ss.text);
  const scaleSetId = ss.body.id as string;
  const object = () => scaleSetObject(env, scaleSetId);
  const liveInstances = async () =>
    (
      await env.DB.prepare("SELECT * FROM instances WHERE scale_set_id = ? AND status != 'deleted' ORDER BY name")
        .bind(scaleSetId)
        .all<Record<string, any>>()
    ).results;
  // Job ids repeat across fake worlds: a job is its entity's.
  const jobRow = (id: number) =>
    env.DB.prepare("SELECT * FROM jobs WHERE source = 'poll' AND id = ? AND entity_id = ?").bind(id, e.repoId).first<Record<string, any>>();
  const fake = () => control<{ jobs: any[]; runners: any[] }>(e.world, "GET", "/state");
  return { ...e, scaleSetId, body: ss.body, object, poll: () => object().pollNow(scaleSetId), liveInstances, jobRow, fake };
}

describe("Forgejo scale sets", () => {
  it("poll by default, and refuse what Forgejo cannot do with what to do instead", async () => {
    const w = await forgejoScaleSet();
    expect(w.body).toMatchObject({ intake: "poll", jit_config_enabled: true, jit_config_timing: "before_create" });
    const webhook = await api.post(`/api/v1/repositories/${w.repoId}/scalesets`, {
      name: unique("fj"),
      provider_name: w.providerName,
      labels: ["linux"],
      image: "debian:12",
      flavor: "small",
      intake: "webhook",
      max_runners: 5,
      min_idle_runners: 1,
    });
    expect(webhook.status).toBe(400);
    expect(webhook.body.details.map((d: { path: string }) => d.path)).toEqual(["intake", "min_idle_runners"]);
    expect(webhook.body.details[0].message).toMatch(/use intake poll/);
    const put = await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { intake: "webhook" });
    expect(put.status).toBe(400);
  });

  it("a Forgejo entity needs no webhook secret, and has no webhook: its routes say why (its scale sets poll)", async () => {
    const e = await forgejoEntity();
    const org = await api.post("/api/v1/organizations", { name: unique("acme"), credentials_name: e.credentialsName });
    expect(org.status).toBe(201);
    for (const method of ["post", "get", "delete"] as const) {
      const res = await api[method](`/api/v1/organizations/${org.body.id}/webhook`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/Forgejo sends no workflow_job webhooks: its scale sets poll/);
    }
    // Where the forge signs its deliveries, the secret is required, and the error says why.
    await env.DB.prepare("UPDATE github_endpoints SET forge = 'gitea' WHERE name = ?").bind(e.endpoint).run();
    const gitea = await api.post("/api/v1/organizations", { name: unique("acme"), credentials_name: e.credentialsName });
    expect(gitea.status).toBe(400);
    expect(gitea.body.details).toEqual([
      { path: "webhook_secret", message: expect.stringMatching(/Gitea signs each workflow_job delivery/) },
    ]);
  });

  it("a schedule entry with idle runners is refused on Forgejo, by its path and why", async () => {
    const w = await forgejoScaleSet();
    const entry = { name: "day", cron: "0 8 * * 1-5", timezone: "UTC", min_idle_runners: 0 };
    const ok = await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { schedules: [entry] });
    expect(ok.status).toBe(200);
    const put = await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { schedules: [entry, { ...entry, name: "peak", min_idle_runners: 2 }] });
    expect(put.status).toBe(400);
    expect(put.body.details).toEqual([
      { path: "schedules.1.min_idle_runners", message: expect.stringMatching(/'peak' asks for 2 idle runners.*one waiting job/) },
    ]);
    const create = await api.post(`/api/v1/repositories/${w.repoId}/scalesets`, {
      name: unique("fj"),
      provider_name: w.providerName,
      labels: ["linux"],
      image: "debian:12",
      flavor: "small",
      max_runners: 5,
      schedules: [{ ...entry, min_idle_runners: 1 }],
    });
    expect(create.status).toBe(400);
    expect(create.body.details.map((d: { path: string }) => d.path)).toEqual(["schedules.0.min_idle_runners"]);
  });

  it("intake poll on a GitHub endpoint is refused", async () => {
    const e = await forgejoEntity();
    await env.DB.prepare("UPDATE github_endpoints SET forge = 'github' WHERE name = (SELECT endpoint_name FROM entities WHERE id = ?)")
      .bind(e.repoId)
      .run();
    const res = await api.post(`/api/v1/repositories/${e.repoId}/scalesets`, {
      name: unique("gh"),
      provider_name: e.providerName,
      labels: ["linux"],
      image: "debian:12",
      flavor: "small",
      max_runners: 5,
      intake: "poll",
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([expect.objectContaining({ path: "intake", message: expect.stringMatching(/Forgejo endpoint/) })]);
  });

  it("makes one ephemeral runner per waiting job, with the job's handle, and takes nothing twice across polls and restarts", async () => {
    const w = await forgejoScaleSet();
    const jobs = await control<any[]>(w.world, "POST", "/jobs", { owner: "acme", repo: "app", runs_on: ["linux"], count: 2 });
    await control(w.world, "POST", "/jobs", { owner: "acme", repo: "app", runs_on: ["gpu"] });
    await control(w.world, "POST", "/jobs", { owner: "other", repo: "app", runs_on: ["linux"] });
    await w.poll();

    const instances = await w.liveInstances();
    expect(instances).toHaveLength(2);
    expect(instances.map((i) => i.forge_job_handle).sort()).toEqual(jobs.map((j) => j.handle).sort());
    const state = await w.fake();
    expect(state.runners).toHaveLength(2);
    expect(state.runners.every((r) => r.ephemeral)).toBe(true);
    expect(state.runners.map((r) => r.name).sort()).toEqual(instances.map((i) => i.name).sort());
    // The registration is sealed: its token opens only with the instance's context, never stored in clear.
    const keyring = await keyringFor(env);
    for (const i of instances) {
      expect(i.jit_config_enc).not.toContain("token");
      const registration = JSON.parse(await open(keyring, i.jit_config_enc, secretContext.jitConfig(i.id)));
      expect(registration.uuid).toBe(state.runners.find((r) => r.name === i.name).uuid);
      expect(i.agent_id).toBe(state.runners.find((r) => r.name === i.name).id);
    }
    for (const j of jobs) expect(await w.jobRow(j.id)).toMatchObject({ status: "queued", scale_set_id: w.scaleSetId });

    // The next poll sees the same jobs: nothing new.
    await w.poll();
    expect(await w.liveInstances()).toHaveLength(2);
    expect((await w.fake()).runners).toHaveLength(2);

    // The object forgets its poller state (a restart that lost it): D1 still says which jobs are whose.
    await inScaleSetObject(w.scaleSetId, (obj) => {
      obj.state.poller = null;
    });
    await w.poll();
    await w.object().reconcileNow(w.scaleSetId);
    expect(await w.liveInstances()).toHaveLength(2);
    expect((await w.fake()).runners).toHaveLength(2);
    const status = await w.object().status(w.scaleSetId);
    expect(status.last_reconcile?.summary).toMatchObject({ queued: 2 });
  });

  it("a job that leaves the queue before its runner took it lets the runner go, and that runner is deleted at Forgejo", async () => {
    const w = await forgejoScaleSet();
    const [job] = await control<any[]>(w.world, "POST", "/jobs", { owner: "acme", repo: "app", runs_on: ["linux"] });
    await w.poll();
    const [instance] = await w.liveInstances();
    expect(instance?.job_id).toBe(job.id);

    await control(w.world, "POST", `/jobs/${job.id}/cancel`);
    await w.poll();
    expect(await w.jobRow(job.id)).toMatchObject({ status: "completed", conclusion: "left_queue" });
    const detached = (await w.liveInstances())[0]!;
    expect(detached).toMatchObject({ job_id: null, job_seq: null, forge_job_handle: null });
    // No new runner for a job that is gone.
    await w.object().reconcileNow(w.scaleSetId);
    expect(await w.liveInstances()).toHaveLength(1);

    // Its runner never took a job: deleting the instance deletes it at Forgejo.
    await w.object().deleteInstance(w.scaleSetId, instance!.name, false);
    await w.object().reconcileNow(w.scaleSetId);
    expect((await w.fake()).runners).toEqual([]);
    const requests = await control<{ method: string; path: string }[]>(w.world, "GET", "/requests");
    expect(requests).toContainEqual(
      expect.objectContaining({ method: "DELETE", path: `/api/v1/repos/acme/app/actions/runners/${instance!.agent_id}` }),
    );
  });

  it("a job its runner took runs, completes, and the runner is never deleted at Forgejo by us", async () => {
    const w = await forgejoScaleSet();
    const [job] = await control<any[]>(w.world, "POST", "/jobs", { owner: "acme", repo: "app", runs_on: ["linux"] });
    await w.poll();
    const [instance] = await w.liveInstances();
    const registration = JSON.parse(await open(await keyringFor(env), instance!.jit_config_enc, secretContext.jitConfig(instance!.id)));
    // The runner comes up and takes its job by handle, as forgejo-runner one-job does.
    await env.DB.prepare("UPDATE instances SET status = 'running', runner_status = 'idle' WHERE id = ?").bind(instance!.id).run();
    const runnerCall = (method: string, body: unknown) =>
      fetch(`${w.world.url}/api/actions/runner.v1.RunnerService/${method}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-runner-uuid": registration.uuid, "x-runner-token": registration.token },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<any>);
    await runnerCall("Declare", { version: "12.8.0", labels: ["linux"] });
    const fetched = await runnerCall("FetchTask", { tasksVersion: 0, handle: instance!.forge_job_handle });
    expect(fetched.task.context.job_id).toBe(job.id);
    await w.poll();
    expect(await w.jobRow(job.id)).toMatchObject({ status: "in_progress" });

    // Done: Forgejo removes the ephemeral runner itself; the machine reports its runner finished.
    await runnerCall("UpdateTask", { state: { id: fetched.task.id, result: "RESULT_SUCCESS" } });
    await env.DB.prepare("UPDATE instances SET runner_status = 'terminated' WHERE id = ?").bind(instance!.id).run();
    await w.poll();
    expect(await w.jobRow(job.id)).toMatchObject({ status: "completed" });
    await w.object().reconcileNow(w.scaleSetId);
    await w.object().reconcileNow(w.scaleSetId);
    const requests = await control<{ method: string; path: string }[]>(w.world, "GET", "/requests");
    expect(requests.filter((r) => r.method === "DELETE")).toEqual([]);
    expect((await w.liveInstances()).every((i) => ["pending_delete", "deleting"].includes(i.status))).toBe(true);
  });

  it("polls on its alarm: a pass arms the poll timer, the alarm polls and runners follow", async () => {
    const w = await forgejoScaleSet();
    const [job] = await control<any[]>(w.world, "POST", "/jobs", { owner: "acme", repo: "app", runs_on: ["linux"] });
    await w.object().reconcileNow(w.scaleSetId);
    const timer = await inScaleSetObject(w.scaleSetId, (obj) => obj.state.timer("forgejo_poll"));
    expect(timer).not.toBeNull();
    const stub = env.SCALE_SET.get(env.SCALE_SET.idFromName(w.scaleSetId));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const [instance] = await w.liveInstances();
    expect(instance?.forge_job_handle).toBe(job.handle);
    // The next poll is armed one interval on (FORGEJO_POLL_INTERVAL_SECONDS, 5 s by default).
    const next = await inScaleSetObject(w.scaleSetId, (obj) => obj.state.timer("forgejo_poll"));
    expect(next).toBeGreaterThan(Date.now());
    // The alarm is armed for it (not for the hourly tick these tests configure).
    expect(await inScaleSetObject(w.scaleSetId, (_o, state) => state.storage.getAlarm())).toBeLessThanOrEqual(next);
  });

  it("serves its machine the forgejo-runner script, its environment and its token, behind its instance token", async () => {
    const w = await forgejoScaleSet({ os_arch: "arm64" });
    const [job] = await control<any[]>(w.world, "POST", "/jobs", { owner: "acme", repo: "app", runs_on: ["linux"] });
    await w.poll();
    const [instance] = await w.liveInstances();
    const token = await mintInstanceToken(
      env.INSTANCE_TOKEN_SECRET,
      { instance: instance!.name, scaleSetId: w.scaleSetId, createAttempt: 1, bootstrapTimeoutMinutes: 20 },
      Date.now(),
    );
    const get = (path: string) => call("GET", `/api/v1/metadata/${path}`, undefined, { token });
    const script = await get("install-script");
    expect(script.status).toBe(200);
    expect(script.text).toContain("one-job --url");
    expect(script.text).toContain("releases/download/v12.10.2/forgejo-runner-12.10.2-linux-arm64");
    const envFile = await get("forgejo/runner-env");
    expect(envFile.text).toContain(`JOB_HANDLE='${job.handle}'`);
    expect(envFile.text).toContain(`FORGEJO_URL='${w.world.url}'`);
    const registration = JSON.parse(await open(await keyringFor(env), instance!.jit_config_enc, secretContext.jitConfig(instance!.id)));
    expect(envFile.text).toContain(`RUNNER_UUID='${registration.uuid}'`);
    const runnerToken = await get("forgejo/runner-token");
    expect(runnerToken.text).toBe(registration.token);
    expect(runnerToken.headers.get("cache-control")).toBe("no-store");
    expect((await call("GET", "/api/v1/metadata/forgejo/runner-token", undefined, { token: "not-a-token" })).status).toBe(401);
  });

  it("backs off while Forgejo fails, one poll at a time, and takes the jobs once it answers", async () => {
    const w = await forgejoScaleSet();
    await control(w.world, "POST", "/jobs", { owner: "acme", repo: "app", runs_on: ["linux"] });
    await control(w.world, "POST", "/faults", { status: 500, path: "/jobs", count: 3 });
    await w.poll();
    const poller = async () =>
      (await inScaleSetObject(w.scaleSetId, (obj) => obj.state.poller)) as { failures: number; retryAt: number | null };
    // The client retries a 500 itself (three attempts): one failed poll.
    expect(await poller()).toMatchObject({ failures: 1 });
    expect((await poller()).retryAt).toBeGreaterThan(Date.now());
    expect(await w.liveInstances()).toHaveLength(0);
    // Two polls at once: the second waits for the first, so only one request goes out.
    await control(w.world, "PUT", "/latency", { ms: 200 });
    const jobLists = async () =>
      (await control<{ method: string; path: string }[]>(w.world, "GET", "/requests")).filter((r) => r.path.endsWith("/runners/jobs"))
        .length;
    const before = await jobLists();
    await Promise.all([w.poll(), w.poll()]);
    expect((await jobLists()) - before).toBe(1);
    expect(await poller()).toMatchObject({ failures: 0, retryAt: null });
    expect(await w.liveInstances()).toHaveLength(1);
  });

  it("shows its poller in the scale set's status: last and next poll, waiting jobs seen, jobs held, failures with the last error", async () => {
    const w = await forgejoScaleSet();
    const status = async () => (await api.get(`/api/v1/scalesets/${w.scaleSetId}`)).body.status.poller;
    await control(w.world, "POST", "/jobs", { owner: "acme", repo: "app", runs_on: ["linux"] });
    await control(w.world, "POST", "/jobs", { owner: "acme", repo: "app", runs_on: ["gpu"] });
    await control(w.world, "POST", "/faults", { status: 500, path: "/jobs", count: 3 });
    await w.poll();
    const failing = await status();
    expect(failing).toMatchObject({ failures: 1, waiting_jobs_seen: null, held_jobs: 0, last_error: expect.stringMatching(/500/) });
    expect(Date.parse(failing.retry_at)).toBeGreaterThan(Date.parse(failing.last_poll_at));
    expect(failing.next_poll_at).toBe(failing.retry_at);

    await w.poll();
    const good = await status();
    // Both waiting jobs are seen; only the one whose labels match is held.
    expect(good).toMatchObject({ failures: 0, retry_at: null, last_error: null, waiting_jobs_seen: 2, held_jobs: 1, invalid_jobs: 0 });
    expect(Date.parse(good.next_poll_at)).toBeGreaterThan(Date.parse(good.last_poll_at));

    // The dashboard's scale set page says the forge, the intake and the same in a sentence.
    const { cookie } = await login();
    const page = (await ui("GET", `/ui/scalesets/${w.scaleSetId}`, { cookie: cookie! })).html;
    expect(page).toMatch(/id="forge">forgejo</);
    expect(page).toMatch(/id="intake">poll</);
    expect(page).toMatch(/id="poller">last poll [^<]*, next [^<]*; 2 waiting job\(s\) seen; 1 job\(s\) held</);

    // Paused, it polls no more and says so.
    expect((await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { enabled: false })).status).toBe(200);
    await w.object().reconcileNow(w.scaleSetId);
    expect((await status()).next_poll_at).toBeNull();
  });
});
