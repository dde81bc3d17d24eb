/**
 * e2e SHAPES: job-shaped runners (docs/scale-sets.md "Shaped scale sets") on three clouds at
 * once, one coordinator: a shaped scale set on the simulator shim, one on the EC2 shim Worker
 * over the fake EC2, one on the Hetzner shim Worker over the fake Hetzner Cloud (their machines
 * boot into simulated runners). Eight runs each queue five jobs on every cloud, of five shapes
 * per cloud (e2e/shapes-plan.ts: two arm64, one spot where the cloud has spot, two images),
 * each job's shape label carrying its own run id; odd runs ask two jobs of one shape, so two
 * runs and two jobs of one run share a shape. Beside them, jobs out of bounds (too many vCPUs,
 * an image not allowed, on the simulator a label copied from another run) that must get no
 * machine. Checked once the world has settled (e2e/shapes-checks.ts):
 *
 *  - every served job completed exactly once, on a machine of its cloud and scale set with the
 *    flavor its shape must get (a hand-written table), its image id, spot and disk;
 *  - the runner that took it had the job's own shape label and no other (so no runner ever took
 *    another shape's or another run's job), as the fake GitHub recorded it;
 *  - machines made == served jobs, per cloud and per run and shape; none idle;
 *  - each out-of-bounds job still queued, never on a runner, its refusal shown by GET /api/v1/jobs;
 *  - at no time more live instances than max_runners; nothing left at the end.
 */
import { sleep } from "../bench/harness.mjs";
import type { WorkflowJob } from "../test/fake-github/types.ts";
import { hetznerCloud } from "./hetzner-cloud.ts";
import { type LiveSampler, sampleLive } from "./live-sampler.ts";
import type { StackProfile } from "./profiles.ts";
import { say } from "./progress.ts";
import { type ApiInstance, type ApiJob, checkRefused, checkServed, type QueuedJob } from "./shapes-checks.ts";
import { allMachines, catalogueCalls } from "./shapes-machines.ts";
import { type CloudPlan, EC2_ARM_AMIS, RUN_IDS, SHAPE_PLANS, shapeLabel, shapesOfRun } from "./shapes-plan.ts";
import { E2E_TIMINGS, scenarioLogs, startStack } from "./stack.ts";

export async function runShapesScenario(
  profile: StackProfile,
): Promise<{ ok: boolean; summary: Record<string, unknown>; violations: string[] }> {
  const t0 = Date.now();
  const slack = profile.name === "production" ? 3 : 1;
  const logs = scenarioLogs("SHAPES", t0);
  const stack = await startStack({
    profile,
    vars: E2E_TIMINGS,
    sim: { boot_delay_ms: 100, job_ms: 400 },
    coordinatorLog: logs.coordinatorLog,
    log: logs.log,
    ec2: { faults: {}, shimLog: logs.shimLog("ec2-shim") },
    cloud: hetznerCloud({ shimLog: logs.shimLog("hetzner-shim") }),
  });
  const { coordinator, gh, w } = stack;
  const violations: string[] = [];
  let sampler: LiveSampler | undefined;
  try {
    await stack.ec2!.account.configure({ images: Object.fromEntries(EC2_ARM_AMIS.map((id) => [id, { architecture: "arm64" }])) });
    const providerOf: Record<CloudPlan["cloud"], string> = { sim: w.provider, ec2: stack.ec2!.provider, hetzner: stack.cloud!.provider };
    const ids = new Map<string, { name: string; max: number }>();
    const scaleSetOf = new Map<CloudPlan, string>();
    for (const plan of SHAPE_PLANS) {
      const ss = await coordinator.api("POST", `/repositories/${w.repo.id}/scalesets`, {
        name: plan.scaleSet,
        provider_name: providerOf[plan.cloud],
        labels: plan.labels,
        max_runners: plan.maxRunners,
        min_idle_runners: 0,
        image: plan.image,
        flavor: plan.flavor,
        bootstrap_timeout: 2,
        shape: plan.bounds,
      });
      ids.set(ss.id, { name: plan.scaleSet, max: plan.maxRunners });
      scaleSetOf.set(plan, ss.id);
    }
    const instances = async () => ((await coordinator.api("GET", "/instances")) as ApiInstance[]).filter((i) => ids.has(i.scale_set_id));
    sampler = sampleLive(ids, instances, async () => (await allMachines(stack)).filter((m) => m.live));
    say(`SHAPES: 3 shaped scale sets (simulator, EC2, Hetzner) after ${Date.now() - t0} ms`);

    // Runs arrive in two waves of four; each run's jobs on every cloud at once, as a workflow's would.
    const queued: QueuedJob[] = [];
    const queue = async (plan: CloudPlan, runId: number, fields: string, name: string, count: number, labelRun = runId) => {
      const label = shapeLabel(plan.key, labelRun, fields);
      const jobs = await gh.queueJobs({ repository: "octo/app", labels: [...plan.labels, label], count, name, run_id: runId });
      return jobs.map((job) => ({ plan, scaleSetId: scaleSetOf.get(plan)!, label, job }));
    };
    for (const [r, runId] of RUN_IDS.entries()) {
      for (const plan of SHAPE_PLANS) {
        const counts = new Map<number, number>();
        for (const s of shapesOfRun(r)) counts.set(s, (counts.get(s) ?? 0) + 1);
        for (const [s, n] of counts) {
          const shape = plan.shapes[s]!;
          for (const q of await queue(plan, runId, shape.fields, `${shape.name}-r${r}`, n)) queued.push({ ...q, shape });
        }
        if (r === 0)
          for (const refusal of plan.refusals)
            for (const q of await queue(plan, runId, refusal.fields, refusal.name, 1, refusal.foreignRun ? RUN_IDS[1]! : runId))
              queued.push({ ...q, refusal });
      }
      if (r === RUN_IDS.length / 2 - 1) {
        say(`SHAPES: first wave queued (${queued.length} jobs)`);
        await sleep(3000);
      }
    }
    const served = queued.filter((q) => q.shape);
    const refused = queued.filter((q) => q.refusal);
    say(`SHAPES: ${served.length} jobs to serve and ${refused.length} out of bounds queued`);

    const apiJobs = async () => {
      const out = new Map<number, ApiJob>();
      for (const id of ids.keys()) {
        const page = (await coordinator.api("GET", `/jobs?scaleset_id=${id}&limit=500`)) as { jobs: ApiJob[] };
        for (const j of page.jobs) out.set(j.id, j);
      }
      return out;
    };
    const jobsNow = async () => new Map((await gh.workflowJobs()).map((j) => [j.id, j] as [number, WorkflowJob]));
    const deadline = Date.now() + 180_000 * slack;
    let final = await jobsNow();
    let shown = await apiJobs();
    const pending = () =>
      served.filter((q) => final.get(q.job.id)?.status !== "completed").length +
      refused.filter((q) => !shown.get(q.job.id)?.refusal).length;
    while (pending() && Date.now() < deadline) {
      await sleep(500);
      [final, shown] = await Promise.all([jobsNow(), apiJobs()]);
    }
    const allDoneAt = Date.now();
    say(
      `SHAPES: ${served.filter((q) => final.get(q.job.id)?.status === "completed").length}/${served.length} served after ${allDoneAt - t0} ms; waiting for the world to settle`,
    );

    // Nothing left: no live machine in any cloud, no D1 instance not deleted, no runner at GitHub.
    const endProblems = async () => {
      const out: string[] = [];
      const [rows, machines, state] = await Promise.all([instances(), allMachines(stack), gh.state()]);
      const live = rows.filter((r) => r.status !== "deleted");
      if (live.length) out.push(`D1 instances not deleted: ${live.map((r) => `${r.name} ${r.status}`).join(", ")}`);
      const left = machines.filter((m) => m.live && ids.has(m.pool_id));
      if (left.length) out.push(`machines left: ${left.map((m) => `${m.cloud} ${m.name}`).join(", ")}`);
      if (state.runners.length) out.push(`runners left at GitHub: ${state.runners.map((r) => r.name).join(", ")}`);
      return out;
    };
    const settleDeadline = Date.now() + 60_000 * slack;
    let problems = await endProblems().catch((e) => [String(e)]);
    while (problems.length && Date.now() < settleDeadline) {
      await sleep(500);
      problems = await endProblems().catch((e) => [String(e)]);
    }
    const settledAt = Date.now();
    await gh.settleDeliveries();
    await sampler.stop();
    violations.push(...problems, ...sampler.violations);

    const [rows, machines, calls] = await Promise.all([instances(), allMachines(stack), catalogueCalls(stack)]);
    [final, shown] = await Promise.all([jobsNow(), apiJobs()]);
    const servedCheck = checkServed(queued, final, machines, rows);
    violations.push(...servedCheck.violations, ...checkRefused(queued, final, shown, rows));
    if (sampler.samples() < 10) violations.push(`only ${sampler.samples()} samples of live instances`);

    const summary = {
      scenario: "SHAPES",
      ok: violations.length === 0,
      jobs: served.length,
      completed: served.filter((q) => final.get(q.job.id)?.status === "completed").length,
      refused: refused.filter((q) => shown.get(q.job.id)?.refusal).length,
      runs: RUN_IDS.length,
      per_cloud: servedCheck.perCloud,
      d1_instances: rows.length,
      catalogue_calls: calls,
      max_live: Object.fromEntries([...ids].map(([id, s]) => [s.name, { ...sampler!.maxLive.get(id)!, max_runners: s.max }])),
      samples: sampler.samples(),
      all_jobs_done_s: Math.round((allDoneAt - t0) / 100) / 10,
      settled_s: Math.round((settledAt - t0) / 100) / 10,
      violations,
    };
    return { ok: violations.length === 0, summary, violations };
  } finally {
    await sampler?.stop();
    await stack.stop();
  }
}
