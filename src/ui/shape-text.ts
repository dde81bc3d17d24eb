export { type ShapeParts, shapeText } from "../shapes/machine-shape";

import { defaultImageName, type ShapeBounds } from "../shapes/shape-bounds";

/**
 * A machine's shape and a shaped scale set's bounds as the dashboard writes them in a line. The
 * shape line is also what the scale set page groups queue times by, so two machines read the
 * same here exactly when a job would find them alike.
 */

const span = (r: { min: number; max: number }, unit: string) => (r.min === r.max ? `${r.min}${unit}` : `${r.min}–${r.max}${unit}`);

/** The bounds in a sentence, the images apart (they are long): `2–16 vCPU, 4–64 GB, …`. */
export function boundsText(b: ShapeBounds): string {
  return [
    span(b.cpu, " vCPU"),
    `${span(b.ram_gb, " GB")} memory`,
    `${span(b.disk_gb, " GB")} disk`,
    b.architectures.join(" or "),
    b.families.length ? `families ${b.families.join(", ")}` : "any family",
    b.spot ? "spot allowed" : "no spot",
    b.max_gpus ? `up to ${b.max_gpus} GPU` : "no GPU",
  ].join(", ");
}

/** The images jobs may name, the default first: `ubuntu-24.04 (default) = ami-…, …`. */
export function imagesText(b: ShapeBounds): string {
  const first = defaultImageName(b);
  const names = [first, ...Object.keys(b.images).filter((n) => n !== first)];
  return names.map((n) => `${n}${n === first ? " (default)" : ""} = ${b.images[n]}`).join(", ");
}
