import { z } from "zod";
import { ZONE } from "./config.ts";

/**
 * A scale set's `extra_specs` for the GCE shim: everything per scale set that the
 * BootstrapInstance does not carry (image = image family or URL, flavor = machine type).
 * Unknown keys are refused, so a typo never silently launches machines with defaults.
 */

export const capacityModes = ["standard", "spot", "spot-with-fallback"] as const;

/** Label keys the shim writes itself (GCE label keys: lowercase, digits, _ and -, ≤ 63, starting with a letter). */
export const LABEL_CONTROLLER = "edgerunner-controller-id";
export const LABEL_POOL = "edgerunner-pool-id";
const LABEL_KEY = /^[a-z][a-z0-9_-]{0,62}$/;
const LABEL_VALUE = /^[a-z0-9_-]{0,63}$/;
/** RFC 1035 names: instances, network tags, networks. */
export const RESOURCE_NAME = /^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$/;
export const MACHINE_TYPE = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)+$/;

const partialUrl = (kind: string, example: string) =>
  z
    .string()
    .regex(
      new RegExp(
        `^(?:https://(?:www|compute)\\.googleapis\\.com/compute/v1/)?(?:projects/[a-z0-9.:-]+/)?${kind}/[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$|^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$`,
      ),
      `must be a name or a URL such as ${example}`,
    );

const Labels = z.record(z.string(), z.string()).superRefine((labels, ctx) => {
  const keys = Object.keys(labels);
  if (keys.length > 60) ctx.addIssue({ code: "custom", message: "at most 60 extra labels (GCE allows 64, the shim uses 2)" });
  for (const k of keys) {
    const problem = !LABEL_KEY.test(k)
      ? "label keys are lowercase letters, digits, _ and -, at most 63, starting with a letter"
      : k.startsWith("edgerunner-")
        ? "edgerunner-* labels are set by the shim"
        : !LABEL_VALUE.test(labels[k]!)
          ? "label values are lowercase letters, digits, _ and -, at most 63"
          : null;
    if (problem) ctx.addIssue({ code: "custom", path: [k], message: problem });
  }
});

export const ExtraSpecs = z.strictObject({
  /** Zones to try, in order (all in one region when a subnetwork is set); default the Worker's GCE_ZONES. */
  zones: z.array(z.string().regex(ZONE, "must be a zone such as us-central1-a")).min(1).max(16).optional(),
  /** standard, spot, or spot first and standard where spot has no capacity. */
  capacity: z.enum(capacityModes).default("standard"),
  /** A VPC network (name or URL); default the project's `default` network. */
  network: partialUrl("global/networks", "global/networks/default").optional(),
  /** A subnetwork name (in the zone's region) or URL such as regions/us-central1/subnetworks/runners. */
  subnetwork: z
    .string()
    .regex(
      /^(?:https:\/\/(?:www|compute)\.googleapis\.com\/compute\/v1\/)?(?:projects\/[a-z0-9.:-]+\/)?regions\/[a-z]+-[a-z]+[0-9]+\/subnetworks\/[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$|^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$/,
      "must be a subnetwork name or a URL such as regions/us-central1/subnetworks/runners",
    )
    .optional(),
  /** An external IPv4 address (default true); without one the network needs Cloud NAT for the runner to reach GitHub. */
  external_ip: z.boolean().default(true),
  disk_size_gb: z.int().min(10).max(65536).optional(),
  disk_type: z
    .string()
    .regex(
      /^(pd-standard|pd-balanced|pd-ssd|pd-extreme|hyperdisk-[a-z-]+)$/,
      "must be a disk type such as pd-balanced or hyperdisk-balanced",
    )
    .optional(),
  /** The service account the machine runs as (an email); none means no service account at all. */
  service_account: z.email().optional(),
  /** OAuth scopes for that service account; default cloud-platform (IAM decides what it may do). */
  scopes: z.array(z.url()).min(1).max(32).optional(),
  labels: Labels.optional(),
  /** Network tags (firewall rules select machines by them). */
  network_tags: z
    .array(z.string().regex(RESOURCE_NAME, "must be a tag such as ci-runner (lowercase, digits and -)"))
    .min(1)
    .max(64)
    .optional(),
});
export type ExtraSpecs = z.infer<typeof ExtraSpecs>;

const KNOWN_KEYS = Object.keys(ExtraSpecs.shape);

/** garm-provider-gcp's and the EC2 shim's names for the same settings, pointed at ours. */
const OTHER_NAMES: Record<string, string> = {
  zone: "zones",
  subnetwork_id: "subnetwork",
  network_id: "network",
  disksize: "disk_size_gb",
  disk_size: "disk_size_gb",
  disktype: "disk_type",
  network_tags_list: "network_tags",
  tags: "labels (or network_tags)",
  custom_labels: "labels",
  spot: 'capacity: "spot"',
  subnet_ids: "subnetwork",
};

export type SpecsResult = { ok: true; specs: ExtraSpecs } | { ok: false; problems: string[] };

export function parseExtraSpecs(raw: unknown): SpecsResult {
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== "object" || Array.isArray(raw)) return { ok: false, problems: ["extra_specs must be a JSON object"] };
  const parsed = ExtraSpecs.safeParse(raw);
  if (parsed.success) {
    if (parsed.data.scopes && !parsed.data.service_account)
      return { ok: false, problems: ["extra_specs.scopes: only with service_account"] };
    return { ok: true, specs: parsed.data };
  }
  const problems = parsed.error.issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys" && issue.path.length === 0)
      return issue.keys.map((k) =>
        OTHER_NAMES[k]
          ? `extra_specs.${k}: unknown key; the GCE shim calls it ${OTHER_NAMES[k]}`
          : `extra_specs.${k}: unknown key (known keys: ${KNOWN_KEYS.join(", ")})`,
      );
    return [`extra_specs.${issue.path.map(String).join(".")}: ${issue.message}`];
  });
  return { ok: false, problems };
}

const encoder = new TextEncoder();

/**
 * An id as a GCE label value: lowercase letters, digits, _ and -, at most 63. A UUID (the
 * coordinator's ids) is kept as it is; anything else is lowercased with other characters as _,
 * and when that changed it or it is too long, 40 characters of it plus 22 hex of its SHA-256
 * keep it unique. Deterministic: listing filters on the same value.
 */
export async function labelValue(id: string): Promise<string> {
  const lowered = id.toLowerCase().replace(/[^a-z0-9_-]/g, "_");
  if (lowered === id && id.length <= 63) return id;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(id)));
  const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${lowered.slice(0, 40)}-${hex.slice(0, 22)}`;
}
