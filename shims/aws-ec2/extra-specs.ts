import { z } from "zod";

/**
 * A scale set's `extra_specs` for the EC2 shim: everything per scale set that the
 * BootstrapInstance does not carry (image = AMI id, flavor = first instance type). Unknown keys
 * are refused, so a typo never silently launches machines with defaults.
 */

export const capacityModes = ["on-demand", "spot", "spot-with-fallback"] as const;
export type CapacityMode = (typeof capacityModes)[number];

export const volumeTypes = ["gp2", "gp3", "io1", "io2", "st1", "sc1", "standard"] as const;

/** Tag keys the shim writes itself; extra tags may not replace them. */
export const TAG_NAME = "Name";
export const TAG_CONTROLLER = "edgerunner:controller-id";
export const TAG_POOL = "edgerunner:pool-id";
const RESERVED_TAG = /^(name|edgerunner:.*)$/i;

const hexId = (prefix: string, what: string) =>
  z.string().regex(new RegExp(`^${prefix}-(?:[0-9a-f]{8}|[0-9a-f]{17})$`), `must be ${what} id such as ${prefix}-0123456789abcdef0`);

export const INSTANCE_TYPE = /^[a-z0-9][a-z0-9-]*\.[a-z0-9-]+$/;
const instanceType = z.string().regex(INSTANCE_TYPE, "must be an instance type such as c6i.large");

const LaunchTemplate = z
  .strictObject({
    id: z
      .string()
      .regex(/^lt-[0-9a-f]{17}$/, "must be a launch template id such as lt-0123456789abcdef0")
      .optional(),
    name: z
      .string()
      .regex(/^[a-zA-Z0-9().\-/_]{3,128}$/, "must be a launch template name (3-128 of letters, digits and ().-/_)")
      .optional(),
    version: z
      .string()
      .regex(/^(\$Latest|\$Default|[1-9][0-9]*)$/, "must be $Latest, $Default or a version number")
      .optional(),
  })
  .refine((t) => (t.id === undefined) !== (t.name === undefined), { message: "give exactly one of id and name" });

const Tags = z.record(z.string(), z.string().max(256, "tag values are at most 256 characters")).superRefine((tags, ctx) => {
  const keys = Object.keys(tags);
  if (keys.length > 40) ctx.addIssue({ code: "custom", message: "at most 40 extra tags (EC2 allows 50 per resource, the shim uses 3)" });
  for (const k of keys) {
    const problem =
      k.length < 1 || k.length > 128
        ? "tag keys are 1 to 128 characters"
        : k.toLowerCase().startsWith("aws:")
          ? "tag keys starting with aws: are reserved by AWS"
          : RESERVED_TAG.test(k)
            ? "Name and edgerunner:* tags are set by the shim"
            : null;
    if (problem) ctx.addIssue({ code: "custom", path: [k], message: problem });
  }
});

export const ExtraSpecs = z
  .strictObject({
    /** Subnets to launch into, tried in order; none means the default VPC's default subnet. */
    subnet_ids: z.array(hexId("subnet", "a subnet")).min(1).max(16).optional(),
    security_group_ids: z.array(hexId("sg", "a security group")).min(1).max(16).optional(),
    /** More instance types to try, in order, after the scale set's flavor. */
    instance_types: z.array(instanceType).min(1).max(10).optional(),
    capacity: z.enum(capacityModes).default("on-demand"),
    /** Highest hourly price for spot, in USD (e.g. "0.05"); none means the on-demand price. */
    spot_max_price: z
      .string()
      .regex(/^\d{1,4}(\.\d{1,6})?$/, 'must be a price such as "0.05"')
      .optional(),
    root_volume_size_gb: z.int().min(1).max(16384).optional(),
    root_volume_type: z.enum(volumeTypes).optional(),
    root_volume_iops: z.int().min(100).max(256000).optional(),
    root_volume_throughput: z.int().min(125).max(1000).optional(),
    /** An instance profile ARN, or its name. */
    iam_instance_profile: z
      .string()
      .regex(/^(arn:aws[a-z-]*:iam::\d{12}:instance-profile\/\S+|[\w+=,.@-]{1,128})$/, "must be an instance profile ARN or name")
      .optional(),
    key_name: z.string().min(1).max(255).optional(),
    launch_template: LaunchTemplate.optional(),
    tags: Tags.optional(),
  })
  .superRefine((s, ctx) => {
    if (s.spot_max_price !== undefined && s.capacity === "on-demand") {
      ctx.addIssue({ code: "custom", path: ["spot_max_price"], message: 'only with capacity "spot" or "spot-with-fallback"' });
    }
    if ((s.root_volume_type === "io1" || s.root_volume_type === "io2") && s.root_volume_iops === undefined) {
      ctx.addIssue({ code: "custom", path: ["root_volume_iops"], message: `required with root_volume_type ${s.root_volume_type}` });
    }
    if (s.root_volume_iops !== undefined && !["io1", "io2", "gp3"].includes(s.root_volume_type ?? "")) {
      ctx.addIssue({ code: "custom", path: ["root_volume_iops"], message: "only with root_volume_type io1, io2 or gp3" });
    }
    if (s.root_volume_throughput !== undefined && s.root_volume_type !== "gp3") {
      ctx.addIssue({ code: "custom", path: ["root_volume_throughput"], message: "only with root_volume_type gp3" });
    }
  });
export type ExtraSpecs = z.infer<typeof ExtraSpecs>;

const KNOWN_KEYS = Object.keys(ExtraSpecs.shape);

/** garm-provider-aws's names for the same settings: a user coming from GARM gets pointed at ours. */
const GARM_NAMES: Record<string, string> = {
  subnet_id: "subnet_ids",
  ssh_key_name: "key_name",
  volume_size: "root_volume_size_gb",
  volume_type: "root_volume_type",
  iops: "root_volume_iops",
  throughput: "root_volume_throughput",
  instance_type: "instance_types",
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
        GARM_NAMES[k]
          ? `extra_specs.${k}: unknown key; the EC2 shim calls it ${GARM_NAMES[k]}`
          : `extra_specs.${k}: unknown key (known keys: ${KNOWN_KEYS.join(", ")})`,
      );
    }
    return [`extra_specs.${issue.path.map(String).join(".")}: ${issue.message}`];
  });
  return { ok: false, problems };
}
