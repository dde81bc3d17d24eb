import type { FC } from "hono/jsx";
import type { ShapeBoundsInput } from "../../shapes/shape-bounds";

/**
 * The "shaped" part of the setup page's scale set form: a tick box and the bounds a job may ask
 * for within, shown only while the box is ticked (CSS, the dashboard has no script), and the
 * bounds read back from the posted form. The API fills in what is left empty and checks the
 * rest, so only what the form's own text format could get wrong is checked here.
 */

export const ShapedFields: FC = () => (
  <>
    <label>
      <input type="checkbox" name="shaped" value="on" /> Shaped: each job names its machine in a{" "}
      <code>{`edgerunner=\${{ github.run_id }}/cpu=4/ram=16`}</code> label and gets one of its own (no image or flavor above)
    </label>
    <fieldset class="shaped-only" id="shape-bounds-fields">
      <legend>What a job may ask for</legend>
      <label>
        vCPUs <input name="shape_cpu" placeholder="1-64" />
      </label>
      <label>
        Memory GB <input name="shape_ram" placeholder="1-256" />
      </label>
      <label>
        Disk GB <input name="shape_disk" placeholder="10-1000" />
      </label>
      <label>
        Architectures <input name="shape_arch" placeholder="amd64, arm64 (the first is a job's default)" />
      </label>
      <label>
        Flavor families <input name="shape_families" placeholder="c7a, m7a (empty: any)" />
      </label>
      <label>
        <input type="checkbox" name="shape_spot" value="on" /> Spot capacity allowed
      </label>
      <label>
        Most GPUs <input name="shape_max_gpus" type="number" min="0" placeholder="0" />
      </label>
      <label>
        Images, one per line as name=image id
        <textarea name="shape_images" rows={3} cols={60} placeholder="ubuntu-24.04=ami-0123456789abcdef0" />
      </label>
      <label>
        Default image <input name="shape_default_image" placeholder="ubuntu-24.04 (empty: the first)" />
      </label>
      <label>
        Label key <input name="shape_key" placeholder="edgerunner" />
      </label>
    </fieldset>
  </>
);

type Form = Record<string, unknown>;
const field = (form: Form, name: string): string => (typeof form[name] === "string" ? (form[name] as string).trim() : "");
const words = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((w) => w.trim())
    .filter(Boolean);

/** `1-64`, or `4` for exactly 4; undefined when empty. */
function range(form: Form, name: string, what: string): { min: number; max: number } | undefined {
  const text = field(form, name);
  if (!text) return undefined;
  const m = /^(\d{1,6})\s*(?:[-–]\s*(\d{1,6}))?$/.exec(text);
  if (!m) throw new FormProblem(`${what}: a range such as 1-64 (or one number), not "${text}".`);
  const min = Number(m[1]);
  const max = Number(m[2] ?? m[1]);
  if (min > max) throw new FormProblem(`${what}: ${min} is above ${max}; write the smaller number first.`);
  return { min, max };
}

class FormProblem extends Error {}

/** The bounds of a form with "shaped" ticked, null when it is not ticked, or what is wrong with the form's text. */
export function shapeFromForm(form: Form): { shape: ShapeBoundsInput | null } | { problem: string } {
  if (field(form, "shaped") !== "on") return { shape: null };
  try {
    const images: Record<string, string> = {};
    for (const line of field(form, "shape_images").split(/\r?\n/)) {
      if (!line.trim()) continue;
      const eq = line.indexOf("=");
      if (eq < 1 || !line.slice(eq + 1).trim()) throw new FormProblem(`Images: write each as name=image id, not "${line.trim()}".`);
      images[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
    }
    if (!Object.keys(images).length) throw new FormProblem("Images: a shaped scale set needs at least one, as name=image id.");
    const gpus = field(form, "shape_max_gpus");
    const arch = words(field(form, "shape_arch"));
    const families = words(field(form, "shape_families"));
    const given = {
      images,
      key: field(form, "shape_key") || undefined,
      cpu: range(form, "shape_cpu", "vCPUs"),
      ram_gb: range(form, "shape_ram", "Memory"),
      disk_gb: range(form, "shape_disk", "Disk"),
      architectures: arch.length ? (arch as ShapeBoundsInput["architectures"]) : undefined,
      families: families.length ? families : undefined,
      spot: field(form, "shape_spot") === "on" || undefined,
      max_gpus: gpus ? Number(gpus) : undefined,
      default_image: field(form, "shape_default_image") || undefined,
    };
    // Left out rather than sent empty, so the API's defaults apply.
    const shape = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as ShapeBoundsInput;
    return { shape };
  } catch (e) {
    if (e instanceof FormProblem) return { problem: e.message };
    throw e;
  }
}
