/**
 * e2e SHAPES' invariants, once the world has settled (e2e/shapes.ts): what GitHub, the clouds
 * and the coordinator's API recorded, held against what each job asked for (e2e/shapes-plan.ts).
 */
import type { WorkflowJob } from "../test/fake-github/types.ts";
import type { CloudMachine } from "./shapes-machines.ts";
import type { CloudPlan, PlannedRefusal, PlannedShape } from "./shapes-plan.ts";

/** A job the scenario queued, with what it asked for. */
export interface QueuedJob {
  plan: CloudPlan;
  scaleSetId: string;
  /** The job's shape label as written. */
  label: string;
  shape?: PlannedShape;
  refusal?: PlannedRefusal;
  job: WorkflowJob;
}

export interface ApiInstance {
  name: string;
  scale_set_id: string;
  status: string;
  flavor: string | null;
  shape: { labels: string[]; flavor: string; image_id: string; job_id: number } | null;
}

export interface ApiJob {
  id: number;
  status: string;
  refusal: string | null;
  runner_name: string | null;
}

const lc = (s: string) => s.toLowerCase();

/**
 * Every served job completed once, on a machine of its own scale set with the flavor and image
 * its shape must get, by a runner whose shape label is the job's own (so never another shape's
 * or run's job); one machine per served job, per shape and run too, and the coordinator's
 * record of each machine agreeing with the cloud's.
 */
export function checkServed(
  queued: QueuedJob[],
  final: Map<number, WorkflowJob>,
  machines: CloudMachine[],
  instances: ApiInstance[],
): { violations: string[]; perCloud: Record<string, { jobs: number; machines: number; flavors: Record<string, number> }> } {
  const violations: string[] = [];
  const byName = new Map(machines.map((m) => [m.name, m]));
  const instanceByName = new Map(instances.map((i) => [i.name, i]));
  const perCloud: Record<string, { jobs: number; machines: number; flavors: Record<string, number> }> = {};
  const cloudTally = (cloud: string) => {
    perCloud[cloud] ??= { jobs: 0, machines: 0, flavors: {} };
    return perCloud[cloud];
  };
  for (const q of queued.filter((x) => x.shape)) {
    const j = final.get(q.job.id)!;
    const want = q.shape!.expect;
    const tag = `${q.plan.cloud} job ${j.id} (${q.shape!.name}, run ${j.run_id})`;
    if (j.status !== "completed" || j.completions !== 1) {
      violations.push(`${tag}: ${j.status}, reported done ${j.completions} times`);
      continue;
    }
    const m = byName.get(j.runner_name ?? "");
    if (!m) {
      violations.push(`${tag} ran on ${j.runner_name}, no machine of any cloud`);
      continue;
    }
    if (m.cloud !== q.plan.cloud || m.pool_id !== q.scaleSetId)
      violations.push(`${tag} ran on ${m.name}, a machine of ${m.cloud} pool ${m.pool_id}`);
    if (m.flavor !== want.flavor) violations.push(`${tag} ran on ${m.name}, a ${m.flavor}: its shape must get ${want.flavor}`);
    if (m.image !== want.imageId) violations.push(`${tag} ran on ${m.name}, image ${m.image}: its shape must get ${want.imageId}`);
    if (m.spot !== null && m.spot !== want.spot) violations.push(`${tag} ran on ${m.name}, spot ${m.spot}: its shape asked ${want.spot}`);
    if (m.diskGb !== undefined && m.diskGb !== want.diskGb)
      violations.push(`${tag} ran on ${m.name}, disk ${m.diskGb}: its shape asked ${want.diskGb}`);
    // The runner's labels when it took the job: exactly one shape label, the job's own.
    const shapeLabels = (j.runner_labels ?? []).filter((l) => lc(l).startsWith(`${q.plan.key}=`));
    if (shapeLabels.length !== 1 || lc(shapeLabels[0]!) !== lc(q.label))
      violations.push(
        `${tag} was taken by ${j.runner_name} labelled ${JSON.stringify(j.runner_labels)}, not with its shape label ${q.label}`,
      );
    const row = instanceByName.get(m.name);
    if (!row) violations.push(`${tag}: ${m.name} is no instance of the coordinator's`);
    else if (row.flavor !== m.flavor || row.shape?.image_id !== m.image)
      violations.push(
        `${tag}: the coordinator shows ${m.name} as ${row.flavor} ${row.shape?.image_id}, the cloud made ${m.flavor} ${m.image}`,
      );
    // The machine was made for a job of this shape and run (a sibling of the same run may take it).
    else if (lc(row.shape?.labels[0] ?? "") !== lc(q.label))
      violations.push(`${tag} ran on ${m.name}, made for ${JSON.stringify(row.shape?.labels)}, not the job's ${q.label}`);
    cloudTally(q.plan.cloud).jobs++;
  }
  // One machine per served job: per scale set, and per shape label (a run's shape), counted at the cloud.
  const labelOf = (m: CloudMachine) => lc(instanceByName.get(m.name)?.shape?.labels[0] ?? "");
  for (const plan of new Set(queued.map((q) => q.plan))) {
    const scaleSetId = queued.find((q) => q.plan === plan)!.scaleSetId;
    const made = machines.filter((m) => m.pool_id === scaleSetId);
    const served = queued.filter((q) => q.plan === plan && q.shape);
    const c = cloudTally(plan.cloud);
    c.machines = made.length;
    for (const m of made) c.flavors[m.flavor] = (c.flavors[m.flavor] ?? 0) + 1;
    if (made.length !== served.length) violations.push(`${plan.cloud}: ${made.length} machines made for ${served.length} served jobs`);
    const jobsPer = new Map<string, number>();
    for (const q of served) jobsPer.set(lc(q.label), (jobsPer.get(lc(q.label)) ?? 0) + 1);
    const machinesPer = new Map<string, number>();
    for (const m of made) machinesPer.set(labelOf(m), (machinesPer.get(labelOf(m)) ?? 0) + 1);
    for (const [label, n] of new Map([...jobsPer, ...machinesPer]))
      if ((jobsPer.get(label) ?? 0) !== (machinesPer.get(label) ?? 0))
        violations.push(
          `${plan.cloud}: ${machinesPer.get(label) ?? 0} machines for ${jobsPer.get(label) ?? 0} jobs labelled ${label || "(none)"} (${n})`,
        );
  }
  return { violations, perCloud };
}

/** Each out-of-bounds job: still queued at GitHub, never on a runner, its refusal shown by the API, no machine made for it. */
export function checkRefused(
  queued: QueuedJob[],
  final: Map<number, WorkflowJob>,
  apiJobs: Map<number, ApiJob>,
  instances: ApiInstance[],
): string[] {
  const violations: string[] = [];
  const madeFor = new Set(instances.map((i) => i.shape?.job_id));
  for (const q of queued.filter((x) => x.refusal)) {
    const j = final.get(q.job.id)!;
    const tag = `${q.plan.cloud} job ${j.id} (${q.refusal!.name})`;
    if (j.status !== "queued" || j.runner_name !== null)
      violations.push(`${tag} should stay queued: it is ${j.status} on ${j.runner_name}`);
    const row = apiJobs.get(j.id);
    if (!row) violations.push(`${tag}: not in GET /api/v1/jobs`);
    else if (!row.refusal || !q.refusal!.reason.test(row.refusal))
      violations.push(`${tag}: refusal ${JSON.stringify(row.refusal)}, expected ${q.refusal!.reason}`);
    if (madeFor.has(j.id)) violations.push(`${tag}: a machine was made for it`);
  }
  return violations;
}
