/**
 * `scaleset create --shaped --cpu 1-64 --ram 1-256 --image ubuntu-24.04=ami-… …`: a shaped scale
 * set's bounds on the command line, and how `scaleset show` and `instance show` print a bounds
 * or a machine's shape in a line. Pure.
 */
import type { components } from "./api-types.ts";
import { bool, int, list, type OptionSpec, str, type Values } from "./command.ts";
import { UsageError } from "./errors.ts";

type Bounds = NonNullable<components["schemas"]["ShapeBounds"]>;
type MachineShape = NonNullable<components["schemas"]["MachineShape"]>;
type Range = { min: number; max: number };

export const SHAPE_OPTIONS: Record<string, OptionSpec> = {
  shaped: {
    type: "boolean",
    description: "a shaped scale set: each job names its machine in a shape label, within the bounds below (no --flavor)",
  },
  "shape-key": { type: "string", arg: "KEY", description: "the shape label's key (default edgerunner)" },
  cpu: { type: "string", arg: "MIN-MAX", description: "vCPUs a job may ask for (default 1-64)" },
  ram: { type: "string", arg: "MIN-MAX", description: "memory in GB a job may ask for (default 1-256)" },
  disk: { type: "string", arg: "MIN-MAX", description: "root disk in GB a job may ask for (default 10-1000)" },
  arch: { type: "string", arg: "A,B", description: "architectures a job may ask for, the first its default (default amd64)" },
  families: { type: "string", arg: "A,B", description: "flavor families a job may use (default: any in the catalogue)" },
  spot: { type: "boolean", description: "jobs may ask for spot capacity" },
  "max-gpus": { type: "string", arg: "N", description: "GPUs a job may ask for (default 0)" },
  "default-image": { type: "string", arg: "NAME", description: "the image of a job without image= (default the first --image)" },
};

/** The bounds options other than --shaped, which mean nothing without it. */
const BOUNDS_FLAGS = Object.keys(SHAPE_OPTIONS).filter((k) => k !== "shaped");

/** `1-64`, or `4` for exactly 4. */
function range(v: Values, name: string): Range | undefined {
  const text = str(v, name);
  if (text === undefined) return undefined;
  const m = /^(\d{1,6})(?:-(\d{1,6}))?$/.exec(text.trim());
  if (!m) throw new UsageError(`--${name}: a range such as 1-64 (or one number), not "${text}"`);
  const min = Number(m[1]);
  const max = Number(m[2] ?? m[1]);
  if (min > max) throw new UsageError(`--${name}: ${min} is above ${max}; write the smaller number first`);
  return { min, max };
}

/** The repeated `--image name=id` of a shaped scale set, in the order given. */
function images(given: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const text of given) {
    const eq = text.indexOf("=");
    const name = text.slice(0, eq).trim();
    const id = text.slice(eq + 1).trim();
    if (eq < 1 || !id) throw new UsageError(`--image: NAME=ID with --shaped (ubuntu-24.04=ami-0123456789abcdef0), not "${text}"`);
    if (Object.hasOwn(out, name)) throw new UsageError(`--image: ${name} given twice`);
    out[name] = id;
  }
  if (!Object.keys(out).length) throw new UsageError("--image NAME=ID is required with --shaped (repeat it for each image jobs may name)");
  return out;
}

/**
 * The bounds of `scaleset create --shaped`, or undefined without --shaped. `imageArgs` are the
 * --image values, which name the allowed images (NAME=ID) here rather than one image.
 * The API fills in what is not given and checks the rest (architectures, names), so only what
 * the command line itself could get wrong is checked here.
 */
export function shapeBounds(v: Values, imageArgs: string[]): Bounds | undefined {
  if (!bool(v, "shaped")) {
    const stray = BOUNDS_FLAGS.filter((k) => v[k] !== undefined);
    if (stray.length) throw new UsageError(`${stray.map((k) => `--${k}`).join(", ")}: only with --shaped`);
    return undefined;
  }
  if (str(v, "flavor") !== undefined)
    throw new UsageError("--flavor: a shaped scale set's flavor is chosen per job; leave it out (bound it with --cpu, --ram, --families)");
  if (str(v, "os-arch") !== undefined) throw new UsageError("--os-arch: with --shaped give --arch (the first is a job's default)");
  const bounds = {
    key: str(v, "shape-key"),
    cpu: range(v, "cpu"),
    ram_gb: range(v, "ram"),
    disk_gb: range(v, "disk"),
    architectures: list(v, "arch") as Bounds["architectures"] | undefined,
    families: list(v, "families"),
    spot: bool(v, "spot"),
    max_gpus: int(v, "max-gpus"),
    images: images(imageArgs),
    default_image: str(v, "default-image"),
  };
  return Object.fromEntries(Object.entries(bounds).filter(([, x]) => x !== undefined)) as Bounds;
}

// The document types bounds as a create takes them (every field but images optional); a
// coordinator always answers them whole, so a missing part only shows as "?".
const span = (r: Partial<Range> | undefined, unit = "") =>
  r?.min !== undefined && r.min === r.max ? `${r.min}${unit}` : `${r?.min ?? "?"}-${r?.max ?? "?"}${unit}`;

/** A shaped scale set's bounds in a line, as `scaleset show` prints them. */
export function boundsLine(b: Bounds): string {
  const parts = [
    `key ${b.key ?? "?"}`,
    `cpu ${span(b.cpu)}`,
    `ram ${span(b.ram_gb, " GB")}`,
    `disk ${span(b.disk_gb, " GB")}`,
    `arch ${b.architectures?.join(",") ?? "?"}`,
    `families ${b.families?.length ? b.families.join(",") : "any"}`,
    b.spot ? "spot allowed" : "no spot",
    `gpus ≤${b.max_gpus ?? 0}`,
  ];
  return parts.join("; ");
}

/** The allowed images in a line, the default first and marked. */
export function imagesLine(b: Bounds): string {
  const names = Object.keys(b.images);
  const first = b.default_image ?? names[0];
  const ordered = [first, ...names.filter((n) => n !== first)].filter((n): n is string => n !== undefined);
  return ordered.map((n) => `${n}=${b.images[n]}${n === first ? " (default)" : ""}`).join(", ");
}

/** A machine's shape in a line: `4 vCPU · 16 GB · arm64 · ubuntu-24.04 · spot`. */
export function machineShapeLine(s: MachineShape): string {
  const parts = [`${s.cpu} vCPU`, `${s.ram_gb} GB`, s.arch, s.image];
  if (s.disk_gb !== null) parts.push(`${s.disk_gb} GB disk`);
  if (s.gpus) parts.push(`${s.gpus} GPU`);
  if (s.spot) parts.push("spot");
  return parts.join(" · ");
}
