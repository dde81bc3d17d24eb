/**
 * A job's shape label: what machine the job asks for, written in its `runs-on:`:
 *
 *     runs-on: edgerunner=${{ github.run_id }}/cpu=4/ram=16/arch=arm64/image=ubuntu-24.04
 *
 * `/` or `,` separate the fields; the run id comes first, so a runner made for one run never
 * takes another run's job. The fields may also be labels of their own (`[edgerunner=…, cpu=4]`).
 * Anything we cannot read exactly is refused with the reason, never guessed: a typo must not
 * quietly become a default machine.
 */

export const shapeFields = ["cpu", "ram", "disk", "arch", "image", "spot", "family", "gpu"] as const;
export type ShapeField = (typeof shapeFields)[number];

/** What a job asked for; null where it did not say (the scale set's bounds supply a default). */
export interface JobShape {
  runId: string;
  cpu: number | null;
  ramGb: number | null;
  diskGb: number | null;
  arch: "amd64" | "arm64" | null;
  image: string | null;
  spot: boolean | null;
  /** In the job's order of preference. */
  families: string[];
  gpus: number | null;
  /** The job's labels that make up the shape, as written: the runner gets exactly these. */
  labels: string[];
  /** The labels lower-cased and sorted: jobs of one identity may take each other's runners, no other job can. */
  identity: string;
}

export type ShapeParse = { kind: "none" } | { kind: "shape"; shape: JobShape } | { kind: "invalid"; problem: string };

const FIELD_LABEL = new RegExp(`^(${shapeFields.join("|")})=`, "i");
const RUN_ID = /^[0-9]{1,20}$/;
const IMAGE = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const FAMILY = /^[a-z0-9][a-z0-9._-]{0,31}$/;
const ARCHES: Record<string, "amd64" | "arm64"> = { amd64: "amd64", x64: "amd64", arm64: "arm64" };

const count = (field: string, value: string, max: number, min = 1): number | string => {
  if (!/^[0-9]{1,6}$/.test(value)) return `${field}=${value} is not a whole number`;
  const n = Number(value);
  if (n < min) return `${field}=${value} is below ${min}`;
  if (n > max) return `${field}=${value} is above ${max}`;
  return n;
};

/** Reads one `field=value` into the shape; a problem string when it cannot. */
function readField(shape: JobShape, seen: Set<string>, part: string): string | null {
  const eq = part.indexOf("=");
  if (eq <= 0) return `"${part}" is not field=value`;
  const field = part.slice(0, eq).toLowerCase();
  const value = part.slice(eq + 1).toLowerCase();
  if (!(shapeFields as readonly string[]).includes(field)) return `unknown field ${field} (known: ${shapeFields.join(", ")})`;
  if (seen.has(field)) return `${field} is given twice`;
  seen.add(field);
  if (value === "") return `${field} has no value`;
  switch (field as ShapeField) {
    case "cpu":
    case "ram":
    case "disk":
    case "gpu": {
      const n = count(field, value, field === "gpu" ? 64 : field === "cpu" ? 4096 : 65_536, field === "gpu" ? 0 : 1);
      if (typeof n === "string") return n;
      if (field === "cpu") shape.cpu = n;
      else if (field === "ram") shape.ramGb = n;
      else if (field === "disk") shape.diskGb = n;
      else shape.gpus = n;
      return null;
    }
    case "arch":
      if (!ARCHES[value]) return `arch=${value} is not amd64, x64 or arm64`;
      shape.arch = ARCHES[value]!;
      return null;
    case "image":
      if (!IMAGE.test(value)) return `image=${value} is not an image name (letters, digits, '.', '_' and '-')`;
      shape.image = value;
      return null;
    case "spot":
      if (value !== "true" && value !== "false") return `spot=${value} is not true or false`;
      shape.spot = value === "true";
      return null;
    case "family": {
      const families = value.split("+");
      const bad = families.find((f) => !FAMILY.test(f));
      if (bad !== undefined) return `family=${value}: "${bad}" is not a family name (families are joined with +)`;
      if (new Set(families).size !== families.length) return `family=${value} names a family twice`;
      shape.families = families;
      return null;
    }
  }
}

/**
 * The shape a job's labels ask for under `key` (a scale set's shape key), `none` when no label
 * starts with `key=`, `invalid` with the first problem found.
 */
export function parseShapeLabels(jobLabels: readonly string[], key: string): ShapeParse {
  const prefix = `${key.toLowerCase()}=`;
  const keyLabels = jobLabels.filter((l) => l.trim().toLowerCase().startsWith(prefix));
  if (keyLabels.length === 0) return { kind: "none" };
  if (keyLabels.length > 1) return { kind: "invalid", problem: `more than one ${prefix} label` };
  const keyLabel = keyLabels[0]!.trim();
  const parts = keyLabel.slice(prefix.length).split(/[/,]/);
  const runId = parts[0]!;
  if (!RUN_ID.test(runId))
    return { kind: "invalid", problem: `the first field after ${prefix} must be the run id (\${{ github.run_id }}), not "${runId}"` };
  const fieldLabels = jobLabels.filter((l) => l !== keyLabels[0] && FIELD_LABEL.test(l.trim())).map((l) => l.trim());
  const shape: JobShape = {
    runId,
    cpu: null,
    ramGb: null,
    diskGb: null,
    arch: null,
    image: null,
    spot: null,
    families: [],
    gpus: null,
    labels: [keyLabel, ...fieldLabels],
    identity: "",
  };
  const seen = new Set<string>();
  for (const part of [...parts.slice(1), ...fieldLabels]) {
    if (part === "") return { kind: "invalid", problem: `${keyLabel} has an empty field` };
    const problem = readField(shape, seen, part);
    if (problem) return { kind: "invalid", problem };
  }
  shape.identity = shape.labels
    .map((l) => l.toLowerCase())
    .sort()
    .join("\n");
  return { kind: "shape", shape };
}

/** Whether a label is part of a shape under `key` (the key label, or a field label beside one). */
export const isShapeLabel = (label: string, key: string): boolean => {
  const l = label.trim().toLowerCase();
  return l.startsWith(`${key.toLowerCase()}=`) || FIELD_LABEL.test(l);
};
