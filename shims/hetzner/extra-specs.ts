import { z } from "zod";

/**
 * A scale set's `extra_specs` for the Hetzner shim: everything per scale set that the
 * BootstrapInstance does not carry (image = image name or id, flavor = first server type).
 * Unknown keys are refused, so a typo never silently creates servers with defaults.
 */

/** Label keys the shim writes itself; extra labels may not replace them. */
export const LABEL_CONTROLLER = "edgerunner-controller-id";
export const LABEL_POOL = "edgerunner-pool-id";

/** Hetzner's rule for label values (https://docs.hetzner.cloud/reference/cloud#labels). */
export const LABEL_VALUE = /^(|[a-z0-9A-Z]|[a-z0-9A-Z][a-z0-9A-Z._-]{0,61}[a-z0-9A-Z])$/;
const LABEL_NAME = /^([a-z0-9A-Z]|[a-z0-9A-Z][a-z0-9A-Z._-]{0,61}[a-z0-9A-Z])$/;
const LABEL_PREFIX = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export const SERVER_TYPE = /^[a-z][a-z0-9-]{1,31}$/;
export const LOCATION = /^[a-z][a-z0-9-]{1,15}$/;
const id = z.int().min(1).max(Number.MAX_SAFE_INTEGER);

function labelKeyProblem(k: string): string | null {
  const slash = k.lastIndexOf("/");
  const prefix = slash >= 0 ? k.slice(0, slash) : null;
  const name = slash >= 0 ? k.slice(slash + 1) : k;
  if (!LABEL_NAME.test(name)) return "label names are 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit";
  if (prefix !== null && (prefix.length > 253 || !LABEL_PREFIX.test(prefix))) return "a label prefix must be a DNS subdomain";
  if (prefix?.startsWith("hetzner.cloud") || k.startsWith("hetzner.cloud/")) return "the hetzner.cloud/ prefix is reserved by Hetzner";
  if (k === LABEL_CONTROLLER || k === LABEL_POOL) return "edgerunner-* labels are set by the shim";
  return null;
}

const Labels = z
  .record(
    z.string(),
    z
      .string()
      .regex(LABEL_VALUE, "label values are at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"),
  )
  .superRefine((labels, ctx) => {
    const keys = Object.keys(labels);
    if (keys.length > 30) ctx.addIssue({ code: "custom", message: "at most 30 extra labels" });
    for (const k of keys) {
      const problem = labelKeyProblem(k);
      if (problem) ctx.addIssue({ code: "custom", path: [k], message: problem });
    }
  });

export const ExtraSpecs = z.strictObject({
  /** Locations to create in, tried in order (e.g. fsn1, nbg1, hel1); none means Hetzner picks one. */
  locations: z.array(z.string().regex(LOCATION, "must be a location name such as fsn1")).min(1).max(8).optional(),
  /** More server types to try, in order, after the scale set's flavor. */
  server_types: z.array(z.string().regex(SERVER_TYPE, "must be a server type name such as cx22")).min(1).max(8).optional(),
  /** A spread placement group's id: no two runners on one host. */
  placement_group: id.optional(),
  /** Firewall ids applied to the public interface at creation. */
  firewalls: z.array(id).min(1).max(5).optional(),
  /** Private network ids attached at creation. */
  networks: z.array(id).min(1).max(3).optional(),
  /** SSH key names or ids of the project, for root (the runner user gets the scale set's ssh keys). */
  ssh_keys: z.array(z.string().min(1).max(128)).min(1).max(10).optional(),
  /** Public IPv4 costs money and Hetzner's IPv4 pool can run out; runners behind a network's NAT can go without. */
  enable_ipv4: z.boolean().default(true),
  enable_ipv6: z.boolean().default(true),
  labels: Labels.optional(),
});
export type ExtraSpecs = z.infer<typeof ExtraSpecs>;

const KNOWN_KEYS = Object.keys(ExtraSpecs.shape);

/** Names other tools use for the same settings: the user gets pointed at ours. */
const OTHER_NAMES: Record<string, string> = {
  location: "locations",
  server_type: "server_types",
  firewall_ids: "firewalls",
  network_ids: "networks",
  placement_group_id: "placement_group",
  tags: "labels",
};

export type SpecsResult = { ok: true; specs: ExtraSpecs } | { ok: false; problems: string[] };

/** Validates a scale set's extra specs; `null`/absent means none. Problems name the key and what is wrong. */
export function parseExtraSpecs(raw: unknown): SpecsResult {
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== "object" || Array.isArray(raw)) return { ok: false, problems: ["extra_specs must be a JSON object"] };
  const parsed = ExtraSpecs.safeParse(raw);
  if (parsed.success) return { ok: true, specs: parsed.data };
  const problems = parsed.error.issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys" && issue.path.length === 0) {
      return issue.keys.map((k) =>
        OTHER_NAMES[k]
          ? `extra_specs.${k}: unknown key; the Hetzner shim calls it ${OTHER_NAMES[k]}`
          : `extra_specs.${k}: unknown key (known keys: ${KNOWN_KEYS.join(", ")})`,
      );
    }
    return [`extra_specs.${issue.path.map(String).join(".")}: ${issue.message}`];
  });
  return { ok: false, problems };
}
