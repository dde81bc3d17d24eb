import { z } from "@hono/zod-openapi";
import { shapeArches } from "./shape-bounds";

/**
 * What a shaped scale set's machine was made as, kept on its instance row (`instances.shape`)
 * and shown by the API, the CLI and the dashboard: the job's ask, the flavor chosen and why.
 */
export const MachineShapeSchema = z
  .object({
    /** The shape's labels lower-cased and sorted: jobs with the same identity may take this runner. */
    identity: z.string(),
    /** The job's shape labels as written: the runner's labels beside the scale set's own. */
    labels: z.array(z.string()),
    cpu: z.int(),
    ram_gb: z.int(),
    disk_gb: z.int().nullable(),
    arch: z.enum(shapeArches),
    image: z.string().openapi({ description: "The image name the job used (one of the scale set's images)" }),
    image_id: z.string().openapi({ description: "The cloud's image id it maps to" }),
    spot: z.boolean(),
    gpus: z.int(),
    families: z.array(z.string()),
    flavor: z.string().openapi({ description: "The flavor chosen from the provider's catalogue" }),
    flavor_reason: z.string().openapi({ description: "Why that flavor", example: "smallest (4 vCPUs, 16 GB) of 3 matching flavors" }),
    job_id: z.int().openapi({ description: "The job it was made for (a job of the same run and shape may take it instead)" }),
  })
  .openapi("MachineShape");
export type MachineShape = z.infer<typeof MachineShapeSchema>;

/** A stored shape, or null when the row has none or it does not read (an older row, a hand edit). */
export function readMachineShape(json: string | null | undefined): MachineShape | null {
  if (!json) return null;
  try {
    const parsed = MachineShapeSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** What a machine was made as, without the run it was made for: `4 vCPU · 16 GB · arm64 · ubuntu-24.04 · spot`. */
export type ShapeParts = Pick<MachineShape, "cpu" | "ram_gb" | "disk_gb" | "arch" | "image" | "spot" | "gpus">;

export function shapeText(s: ShapeParts): string {
  const parts = [`${s.cpu} vCPU`, `${s.ram_gb} GB`, s.arch, s.image];
  if (s.disk_gb !== null) parts.push(`${s.disk_gb} GB disk`);
  if (s.gpus) parts.push(`${s.gpus} GPU`);
  if (s.spot) parts.push("spot");
  return parts.join(" · ");
}
