import { z } from "@hono/zod-openapi";
import type { JobShape } from "./shape-label";

/**
 * What a shaped scale set lets its jobs ask for (docs/scale-sets.md "Shaped scale sets"). The
 * admin sets these; a job's shape label (shape-label.ts) is checked against them before any
 * machine is made, so a workflow can never ask for more than the admin agreed to pay for, nor
 * name an image the admin has not vetted.
 */

export const SHAPE_KEY_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
export const shapeArches = ["amd64", "arm64"] as const;
export type ShapeArch = (typeof shapeArches)[number];

const IMAGE_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const FAMILY = /^[a-z0-9][a-z0-9._-]{0,31}$/;

const Range = (what: string, unit: string, floor: number, ceiling: number, defaults: { min: number; max: number }) =>
  z
    .strictObject({
      min: z.int().min(floor).max(ceiling).default(defaults.min),
      max: z.int().min(floor).max(ceiling).default(defaults.max),
    })
    .refine((r) => r.min <= r.max, { message: "min must not be above max", path: ["max"] })
    .default(defaults)
    .openapi({ description: `The ${what} a job may ask for, in ${unit} (both ends included)` });

export const ShapeBoundsSchema = z
  .strictObject({
    key: z
      .string()
      .regex(SHAPE_KEY_PATTERN, "1-32 lower-case letters, digits, '_' and '-', starting with a letter")
      .default("edgerunner")
      .openapi({
        // biome-ignore lint/suspicious/noTemplateCurlyInString: `${{ github.run_id }}` is the GitHub Actions expression a workflow writes, not a placeholder
        description: "The shape label's key: jobs ask with `runs-on: <key>=${{ github.run_id }}/cpu=4/…`",
        example: "edgerunner",
      }),
    cpu: Range("vCPUs", "vCPUs", 1, 1024, { min: 1, max: 64 }),
    ram_gb: Range("memory", "GB", 1, 8192, { min: 1, max: 256 }),
    disk_gb: Range("root disk", "GB", 1, 65_536, { min: 10, max: 1000 }),
    architectures: z
      .array(z.enum(shapeArches))
      .min(1)
      .default(["amd64"])
      .openapi({ description: "Architectures a job may ask for; the first is what a job gets without `arch=`" }),
    families: z
      .array(z.string().regex(FAMILY, "a flavor family such as c7a, n2 or cax"))
      .max(50)
      .default([])
      .openapi({ description: "Flavor families a job may use (empty: any in the provider's catalogue)", example: ["c7a", "m7a"] }),
    spot: z.boolean().default(false).openapi({ description: "Whether a job may ask for spot capacity (`spot=true`)" }),
    max_gpus: z.int().min(0).max(16).default(0).openapi({ description: "GPUs a job may ask for (`gpu=N`); 0: none" }),
    images: z
      .record(z.string().regex(IMAGE_NAME, "an image name such as ubuntu-24.04"), z.string().min(1).max(512))
      .refine((m) => Object.keys(m).length >= 1 && Object.keys(m).length <= 50, "between 1 and 50 images")
      .openapi({
        description: "The images jobs may name (`image=`), each mapped to the cloud's image id; a job never names a raw id",
        example: { "ubuntu-24.04": "ami-0123456789abcdef0" },
      }),
    default_image: z
      .string()
      .regex(IMAGE_NAME)
      .optional()
      .openapi({ description: "The image of a job without `image=` (one of `images`; default the first)" }),
  })
  .superRefine((b, ctx) => {
    if (b.default_image !== undefined && !(b.default_image in b.images))
      ctx.addIssue({ code: "custom", path: ["default_image"], message: `${b.default_image} is not one of images` });
  })
  .openapi("ShapeBounds");

export type ShapeBoundsInput = z.input<typeof ShapeBoundsSchema>;
export type ShapeBounds = z.infer<typeof ShapeBoundsSchema>;

/** The image name a job without `image=` gets. */
export const defaultImageName = (b: ShapeBounds): string => b.default_image ?? Object.keys(b.images)[0]!;

/** A job's shape with the bounds' defaults filled in and every bound checked: what its machine must be. */
export interface ShapeRequest {
  cpu: number;
  ramGb: number;
  /** Null: the job did not ask, the pool's extra specs decide. */
  diskGb: number | null;
  arch: ShapeArch;
  imageName: string;
  /** The cloud's id for the image, from the allow-list. */
  imageId: string;
  spot: boolean;
  /** The families the job may get, in its order of preference (empty: any the bounds allow). */
  families: string[];
  gpus: number;
}

const range = (what: string, asked: number, r: { min: number; max: number }, unit = "") =>
  asked > r.max
    ? `${what}=${asked} is above this scale set's ${r.max}${unit}`
    : asked < r.min
      ? `${what}=${asked} is below this scale set's ${r.min}${unit}`
      : null;

/**
 * The machine a job's shape asks for within a shaped scale set's bounds, or why it gets none.
 * `runId` is the job's own run: a label naming another run would let that run's jobs take this
 * job's runner (or the other way), so it is refused.
 */
export function shapeRequest(
  shape: JobShape,
  bounds: ShapeBounds,
  runId: number | string,
): { ok: true; request: ShapeRequest } | { ok: false; problem: string } {
  const fail = (problem: string) => ({ ok: false as const, problem });
  if (shape.runId !== String(runId))
    return fail(`the label's run id ${shape.runId} is not this job's run (${runId}): write \${{ github.run_id }}`);
  const cpu = shape.cpu ?? bounds.cpu.min;
  const ramGb = shape.ramGb ?? bounds.ram_gb.min;
  const problem =
    range("cpu", cpu, bounds.cpu) ??
    range("ram", ramGb, bounds.ram_gb, " GB") ??
    (shape.diskGb === null ? null : range("disk", shape.diskGb, bounds.disk_gb, " GB"));
  if (problem) return fail(problem);
  const arch = shape.arch ?? bounds.architectures[0]!;
  if (!bounds.architectures.includes(arch)) return fail(`arch=${arch} is not allowed here (allowed: ${bounds.architectures.join(", ")})`);
  const imageName = shape.image ?? defaultImageName(bounds);
  const imageId = Object.hasOwn(bounds.images, imageName) ? bounds.images[imageName] : undefined;
  if (imageId === undefined)
    return fail(`image=${imageName} is not one of this scale set's images (${Object.keys(bounds.images).join(", ")})`);
  const spot = shape.spot ?? false;
  if (spot && !bounds.spot) return fail("spot=true is not allowed on this scale set");
  const gpus = shape.gpus ?? 0;
  if (gpus > bounds.max_gpus) return fail(`gpu=${gpus} is above this scale set's ${bounds.max_gpus}`);
  const outside = bounds.families.length ? shape.families.filter((f) => !bounds.families.includes(f)) : [];
  if (outside.length) return fail(`family=${outside.join("+")} is not allowed here (allowed: ${bounds.families.join(", ")})`);
  return { ok: true, request: { cpu, ramGb, diskGb: shape.diskGb, arch, imageName, imageId, spot, families: shape.families, gpus } };
}
