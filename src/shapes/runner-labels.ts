import type { MachineShape } from "./machine-shape";

/**
 * A runner's labels: its scale set's, and for a shaped machine its job's shape labels as the job
 * wrote them. GitHub gives a runner only jobs whose every label it has, so the shape labels (run
 * id first) keep any other run's or shape's job off it.
 */
export const runnerLabels = (scaleSetLabels: readonly string[], shape: Pick<MachineShape, "labels"> | null | undefined): string[] =>
  shape ? [...scaleSetLabels, ...shape.labels] : [...scaleSetLabels];
