import type { FlavorCatalogue } from "../providers/shim-protocol";
import { chooseFlavor } from "./flavor-choice";
import type { MachineShape } from "./machine-shape";
import { type ShapeBounds, shapeRequest } from "./shape-bounds";
import { parseShapeLabels } from "./shape-label";

/**
 * A shaped scale set's queued jobs, judged: each either can have a machine (its shape, within
 * the bounds, and the flavor it gets) or is refused with a reason the job's row keeps, so it is
 * shown and never asks again. Without a catalogue nothing is judged that needs one: those jobs
 * wait, unrefused, for the provider to answer.
 */

export interface QueuedShapedJob {
  seq: number;
  id: number;
  runId: number;
  labels: string[];
}

export interface ShapedJobs {
  /** Oldest first, as given. */
  servable: { seq: number; shape: MachineShape }[];
  refusals: { seq: number; jobId: number; problem: string }[];
  /** Jobs that passed their bounds but could not be given a flavor: the catalogue is not at hand. */
  awaitingCatalogue: number;
}

export function judgeShapedJobs(
  jobs: readonly QueuedShapedJob[],
  bounds: ShapeBounds,
  catalogue: FlavorCatalogue | null,
  /** The runners register with a comma-separated label list (no JIT config: config.sh, act_runner). */
  commaSeparatedLabels = false,
): ShapedJobs {
  const out: ShapedJobs = { servable: [], refusals: [], awaitingCatalogue: 0 };
  const refuse = (job: QueuedShapedJob, problem: string) => out.refusals.push({ seq: job.seq, jobId: job.id, problem });
  for (const job of jobs) {
    const parsed = parseShapeLabels(job.labels, bounds.key);
    if (parsed.kind === "none") {
      refuse(job, `no ${bounds.key}= label: this scale set makes machines only for jobs that say their shape`);
      continue;
    }
    if (parsed.kind === "invalid") {
      refuse(job, parsed.problem);
      continue;
    }
    if (commaSeparatedLabels && parsed.shape.labels.some((l) => l.includes(","))) {
      refuse(job, "this scale set's runners register with a comma-separated label list: write the shape with / between fields");
      continue;
    }
    const asked = shapeRequest(parsed.shape, bounds, job.runId);
    if (!asked.ok) {
      refuse(job, asked.problem);
      continue;
    }
    if (!catalogue) {
      out.awaitingCatalogue++;
      continue;
    }
    const choice = chooseFlavor(catalogue, asked.request, bounds);
    if (!choice.ok) {
      refuse(job, choice.problem);
      continue;
    }
    const r = asked.request;
    out.servable.push({
      seq: job.seq,
      shape: {
        identity: parsed.shape.identity,
        labels: parsed.shape.labels,
        cpu: r.cpu,
        ram_gb: r.ramGb,
        disk_gb: r.diskGb,
        arch: r.arch,
        image: r.imageName,
        image_id: r.imageId,
        spot: r.spot,
        gpus: r.gpus,
        families: r.families,
        flavor: choice.flavor.name,
        flavor_reason: choice.why,
        job_id: job.id,
      },
    });
  }
  return out;
}
