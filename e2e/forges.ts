/**
 * e2e G: three forges at once. A GitHub scale set (the fake GitHub, webhooks), a Gitea scale set
 * (the fake Gitea: its workflow_job webhooks installed through the coordinator's API, machines
 * playing act_runner) and a Forgejo scale set (the fake Forgejo: the object polls its waiting
 * jobs, machines playing forgejo-runner one-job with the job's handle), all on the simulator
 * shim and one coordinator, which is killed (SIGKILL) and restarted on its persisted state once
 * mid-run. Checked once the world has settled:
 *
 *  - every job of every forge completed exactly once, on a runner the coordinator created;
 *  - machines created ≤ jobs (no idle minimum here), though the kill lands inside creates that
 *    outlast the restart (the simulator takes 4.5 s over them then);
 *  - at no time more live instances than max_runners (the coordinator's D1 and the simulator);
 *  - nothing left: no machine in the simulator, no runner at any forge, every D1 instance deleted.
 */
import { randomBytes } from "node:crypto";
import { percentile, sleep } from "../bench/harness.mjs";
import { startFakeForgejo } from "../test/fake-forgejo/server.ts";
import type { FakeJob as ForgejoJob, FakeRunner as ForgejoRunner } from "../test/fake-forgejo/world.ts";
import { FakeGiteaWorld } from "../test/fake-gitea/control-client.ts";
import { startFakeGitea } from "../test/fake-gitea/server.ts";
import { createsAsked } from "../test/fake-shim/requests.ts";
import type { RecordedRequest } from "../test/fake-shim/types.ts";
import { type LiveSampler, sampleLive } from "./live-sampler.ts";
import type { StackProfile } from "./profiles.ts";
import { say } from "./progress.ts";
import { E2E_TIMINGS, scenarioLogs, startStack } from "./stack.ts";

type ForgeName = "github" | "gitea" | "forgejo";

interface ForgeScaleSet {
  forge: ForgeName;
  name: string;
  labels: string[];
  max: number;
}

const SCALE_SETS: ForgeScaleSet[] = [
  { forge: "github", name: "gh", labels: ["self-hosted", "linux", "gh"], max: 6 },
  { forge: "gitea", name: "gitea", labels: ["gitea-linux"], max: 6 },
  { forge: "forgejo", name: "forgejo", labels: ["forgejo-linux"], max: 6 },
];
const BURSTS: Record<ForgeName, number>[] = [
  { github: 8, gitea: 8, forgejo: 8 },
  { github: 6, gitea: 6, forgejo: 6 },
  { github: 6, gitea: 6, forgejo: 6 },
];
const TIMINGS = { ...E2E_TIMINGS, FORGEJO_POLL_INTERVAL_SECONDS: "1" };

async function control(url: string, method: string, body?: unknown): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { "content-type": "application/json" },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

export async function runForgesScenario(
  profile: StackProfile,
): Promise<{ ok: boolean; summary: Record<string, unknown>; violations: string[] }> {
  const t0 = Date.now();
  const slack = profile.name === "production" ? 3 : 1;
  const [giteaServer, forgejoServer] = await Promise.all([startFakeGitea(), startFakeForgejo()]);
  // The default worlds (at the roots) are the forges the coordinator talks to; Gitea's delivers its webhooks itself,
  // once each, as Gitea does: a delivery the restart drops is found again by delivery recovery's
  // backstop (Gitea shows its record of deliveries only in its web UI), as GitHub's are through its API.
  giteaServer.worlds.get("")!.settings = { deliver: true, redeliver: false };
  const gitea = new FakeGiteaWorld(giteaServer.url);
  const forgejoUrl = forgejoServer.url;
  // E2E_LOG_DIR=dir keeps the coordinator's log and what the simulated machines did, as for the other scenarios.
  const logs = scenarioLogs("G", t0);
  const stack = await startStack({
    profile,
    vars: TIMINGS,
    sim: { boot_delay_ms: 100, job_ms: 400 },
    coordinatorLog: logs.coordinatorLog,
    log: logs.log,
  });
  const { coordinator, gh, w } = stack;
  const violations: string[] = [];
  let sampler: LiveSampler | undefined;
  try {
    // The forges' accounts and tokens, registered the way a user would (docs/forges.md).
    const tag = randomBytes(3).toString("hex");
    const giteaToken = `gitea-${tag}-token`;
    const forgejoToken = `forgejo-${tag}-token`;
    await gitea.seed({ repos: ["octo/app"], orgs: ["octo"], tokens: [{ token: giteaToken, login: "ci-admin", admin: true }] });
    await control(`${forgejoUrl}/_fake/tokens`, "POST", { token: forgejoToken });
    const entityOn = async (forge: "gitea" | "forgejo", baseUrl: string, token: string) => {
      await coordinator.api("POST", "/github/endpoints", { name: `${forge}-${tag}`, forge, base_url: baseUrl });
      await coordinator.api("POST", "/github/credentials", {
        name: `${forge}-token-${tag}`,
        endpoint: `${forge}-${tag}`,
        auth_type: "pat",
        pat: { oauth2_token: token },
      });
      const repo = await coordinator.api("POST", "/repositories", {
        owner: "octo",
        name: "app",
        credentials_name: `${forge}-token-${tag}`,
        // Forgejo sends no webhooks: its entity needs no secret.
        ...(forge === "gitea" && { webhook_secret: `gitea-hook-${tag}-secret` }),
      });
      return repo.id as string;
    };
    const giteaRepo = await entityOn("gitea", giteaServer.url, giteaToken);
    const forgejoRepo = await entityOn("forgejo", forgejoUrl, forgejoToken);
    // Gitea's hook, installed at Gitea by the coordinator (its URL: PUBLIC_URL/webhooks/gitea).
    await coordinator.api("POST", `/repositories/${giteaRepo}/webhook`);
    const entityOf: Record<ForgeName, string> = { github: w.repo.id, gitea: giteaRepo, forgejo: forgejoRepo };

    const ids = new Map<string, ForgeScaleSet>();
    for (const s of SCALE_SETS) {
      const ss = await coordinator.api("POST", `/repositories/${entityOf[s.forge]}/scalesets`, {
        name: s.name,
        provider_name: w.provider,
        labels: s.labels,
        max_runners: s.max,
        min_idle_runners: 0,
        image: "ubuntu:24.04",
        flavor: "small",
        bootstrap_timeout: 2,
      });
      ids.set(ss.id, s);
    }
    say(`G: 3 scale sets (GitHub, Gitea, Forgejo) after ${Date.now() - t0} ms`);
    const instances = async () => ((await coordinator.api("GET", "/instances")) as any[]).filter((i) => ids.has(i.scale_set_id));

    sampler = sampleLive(ids, instances, stack.machines);
    const { maxLive, violations: liveViolations } = sampler;

    const labelsOf = (forge: ForgeName) => SCALE_SETS.find((s) => s.forge === forge)!.labels;
    const queued: Record<ForgeName, number> = { github: 0, gitea: 0, forgejo: 0 };
    const kills: number[] = [];
    for (const [b, burst] of BURSTS.entries()) {
      // The kill lands inside creates that outlast the restart: the simulator takes 4.5 s over them,
      // and makes the machines all the same, so the restarted coordinator must wait for them.
      if (b === 0) await stack.slowCreates(4_500);
      await gh.queueJobs({ repository: "octo/app", labels: labelsOf("github"), count: burst.github, name: `gh-burst${b}` });
      await gitea.queueJobs("octo/app", labelsOf("gitea"), burst.gitea);
      await control(`${forgejoUrl}/_fake/jobs`, "POST", {
        owner: "octo",
        repo: "app",
        runs_on: labelsOf("forgejo"),
        name: `forgejo-burst${b}`,
        count: burst.forgejo,
      });
      for (const f of Object.keys(queued) as ForgeName[]) queued[f] += burst[f];
      say(`G: burst ${b + 1}/${BURSTS.length} queued (${JSON.stringify(queued)})`);
      if (b === 0) {
        await sleep(1500);
        const r0 = Date.now();
        kills.push(r0);
        await coordinator.restart();
        say(`G: coordinator killed and restarted on its persisted state (${Date.now() - r0} ms)`);
        await stack.slowCreates(null);
      }
      if (b < BURSTS.length - 1) await sleep(3000);
    }

    // Done means: GitHub's jobs completed, Gitea's completed, Forgejo's finished (success or failure).
    const forgejoState = async () =>
      (await control(`${forgejoUrl}/_fake/state`, "GET")) as { jobs: ForgejoJob[]; runners: ForgejoRunner[] };
    const unfinishedNow = async () => {
      const [ghJobs, gt, fj] = await Promise.all([gh.workflowJobs(), gitea.state(), forgejoState()]);
      return {
        github: ghJobs.filter((j) => j.status !== "completed").length,
        gitea: gt.jobs.filter((j) => j.status !== "completed").length,
        forgejo: fj.jobs.filter((j) => j.status === "waiting" || j.status === "running").length,
      };
    };
    const jobsDeadline = Date.now() + 150_000 * slack;
    let left = await unfinishedNow();
    while (left.github + left.gitea + left.forgejo > 0 && Date.now() < jobsDeadline) {
      await sleep(250);
      left = await unfinishedNow();
    }
    const allDoneAt = Date.now();
    for (const [forge, n] of Object.entries(left)) if (n) violations.push(`${forge}: ${n} jobs not completed`);
    say(`G: jobs done after ${allDoneAt - t0} ms (left: ${JSON.stringify(left)}); waiting for the world to settle`);

    // The end state: nothing live anywhere.
    const endProblems = async (): Promise<string[]> => {
      const out: string[] = [];
      const [rows, machines, ghState, gt, fj] = await Promise.all([
        instances(),
        stack.machines(),
        gh.state(),
        gitea.state(),
        forgejoState(),
      ]);
      const live = rows.filter((r) => r.status !== "deleted");
      if (live.length) out.push(`D1 instances not deleted: ${live.map((r) => `${r.name} ${r.status}/${r.runner_status}`).join(", ")}`);
      const ours = machines.filter((m) => ids.has(m.pool_id));
      if (ours.length) out.push(`${ours.length} machines left in the simulator: ${ours.map((m) => m.name).join(", ")}`);
      if (ghState.runners.length) out.push(`runners left at GitHub: ${ghState.runners.map((r) => r.name).join(", ")}`);
      if (gt.runners.length) out.push(`runners left at Gitea: ${gt.runners.map((r) => `${r.name} ${r.status}`).join(", ")}`);
      if (fj.runners.length) out.push(`runners left at Forgejo: ${fj.runners.map((r) => `${r.name} ${r.status}`).join(", ")}`);
      return out;
    };
    const settleDeadline = Date.now() + 60_000 * slack;
    let problems = await endProblems().catch((e) => [String(e)]);
    while (problems.length && Date.now() < settleDeadline) {
      await sleep(500);
      problems = await endProblems().catch((e) => [String(e)]);
    }
    const settledAt = Date.now();
    await Promise.all([gh.settleDeliveries(), gitea.settle()]);
    await sampler.stop();
    violations.push(...problems, ...liveViolations);

    // Every job exactly once, on a runner the coordinator created for that forge's scale set.
    const rows = await instances();
    const createdBy = (forge: ForgeName) =>
      new Set(rows.filter((r) => ids.get(r.scale_set_id)?.forge === forge).map((r) => r.name as string));
    const [ghJobs, gt, fj] = await Promise.all([gh.workflowJobs(), gitea.state(), forgejoState()]);
    for (const j of ghJobs) {
      if (j.completions !== 1) violations.push(`GitHub job ${j.id} reported done ${j.completions} times`);
      if (j.runner_name !== null && !createdBy("github").has(j.runner_name)) violations.push(`GitHub job ${j.id} ran on ${j.runner_name}`);
    }
    const giteaCompleted = new Map<number, number>();
    for (const d of gt.deliveries) if (d.action === "completed") giteaCompleted.set(d.job_id, (giteaCompleted.get(d.job_id) ?? 0) + 1);
    for (const j of gt.jobs) {
      if (!createdBy("gitea").has(j.runner_name))
        violations.push(`Gitea job ${j.id} ran on '${j.runner_name}', not a runner the coordinator created`);
      if (giteaCompleted.get(j.id) !== 1) violations.push(`Gitea job ${j.id} completed ${giteaCompleted.get(j.id) ?? 0} times`);
    }
    for (const j of fj.jobs) {
      if (j.status !== "success") violations.push(`Forgejo job ${j.id} ended ${j.status}`);
      if (!j.runner_name || !createdBy("forgejo").has(j.runner_name))
        violations.push(`Forgejo job ${j.id} ran on '${j.runner_name ?? ""}', not a runner the coordinator created`);
      if (j.fetches !== 1) violations.push(`Forgejo job ${j.id} was handed to ${j.fetches} runners`);
    }
    // Each Gitea/Forgejo runner took exactly one job: no runner name serves two.
    for (const [forge, names] of [
      ["gitea", gt.jobs.map((j) => j.runner_name)],
      ["forgejo", fj.jobs.map((j) => j.runner_name ?? "")],
    ] as const) {
      const seen = new Set<string>();
      for (const n of names) {
        if (seen.has(n)) violations.push(`${forge}: runner ${n} ran two jobs`);
        seen.add(n);
      }
    }
    const jobsTotal = ghJobs.length + gt.jobs.length + fj.jobs.length;
    // Machines the simulator created (a batch create counts once per instance in it). D1 may hold more
    // instances: a create the killed coordinator never sent is closed and made again.
    const shimRequests = (await (await fetch(`${w.shimControl}/requests`)).json()) as RecordedRequest[];
    const machinesCreated = new Set(
      createsAsked(shimRequests)
        .filter((c) => c.status === 201)
        .map((c) => c.name),
    ).size;
    // A row the kill left in pending_create (its runner being registered, no create sent yet) is
    // given up and made again, with no machine of its own; one left `creating` is asked about by
    // name and its machine adopted (scaleset/machine-outcomes.ts). Either way: one machine per job.
    let interrupted = 0;
    for (const r of rows) {
      const shown = (await coordinator.api("GET", `/instances/${r.name}`)) as { transitions: { reason: string }[] };
      if (shown.transitions.some((t) => t.reason === "create was interrupted")) interrupted++;
    }
    const cutOff = (r: RecordedRequest) => kills.some((k) => r.at < k && (r.answered_at === undefined || r.answered_at > k));
    const createsCutOff = createsAsked(shimRequests.filter(cutOff)).length;
    if (machinesCreated > jobsTotal) {
      // Which forge's scale set made the extra ones, to say where to look.
      const setOf = new Map(rows.map((r) => [r.name as string, ids.get(r.scale_set_id)?.forge ?? "?"]));
      const byForge: Record<string, number> = {};
      for (const c of createsAsked(shimRequests).filter((c) => c.status === 201)) {
        const forge = setOf.get(c.name) ?? "?";
        byForge[forge] = (byForge[forge] ?? 0) + 1;
      }
      violations.push(`${machinesCreated} machines created for ${jobsTotal} jobs (by forge: ${JSON.stringify(byForge)})`);
    }
    if (sampler.samples() < 10) violations.push(`only ${sampler.samples()} samples of live instances`);
    const forgejoRequests = (await control(`${forgejoUrl}/_fake/requests`, "GET")) as { method: string; path: string }[];

    const waits = ghJobs
      .filter((j) => j.in_progress_at !== null)
      .map((j) => j.in_progress_at! - j.queued_at)
      .sort((a, b) => a - b);
    const summary = {
      scenario: "G",
      ok: violations.length === 0,
      jobs: { github: ghJobs.length, gitea: gt.jobs.length, forgejo: fj.jobs.length },
      completed: {
        github: ghJobs.filter((j) => j.status === "completed").length,
        gitea: gt.jobs.filter((j) => j.status === "completed").length,
        forgejo: fj.jobs.filter((j) => j.status === "success").length,
      },
      instances_created: machinesCreated,
      d1_instances: rows.length,
      creates_interrupted: interrupted,
      creates_cut_off_by_kills: createsCutOff,
      max_live: Object.fromEntries([...ids].map(([id, s]) => [s.name, { ...maxLive.get(id)!, max_runners: s.max }])),
      github_queued_to_in_progress_ms: { p50: percentile(waits, 50), p99: percentile(waits, 99) },
      gitea_deliveries: gt.deliveries.length,
      gitea_deliveries_refused: gt.deliveries.filter((d) => d.status !== null && d.status >= 400).length,
      forgejo_rest_requests: forgejoRequests.length,
      forgejo_job_polls: forgejoRequests.filter((r) => r.method === "GET" && r.path.endsWith("/actions/runners/jobs")).length,
      samples: sampler.samples(),
      all_jobs_done_s: Math.round((allDoneAt - t0) / 100) / 10,
      settled_s: Math.round((settledAt - t0) / 100) / 10,
      violations,
    };
    return { ok: violations.length === 0, summary, violations };
  } finally {
    await sampler?.stop();
    await stack.stop();
    await Promise.all([giteaServer.close(), forgejoServer.close()]);
  }
}
