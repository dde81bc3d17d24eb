import { z } from "@hono/zod-openapi";

/**
 * Provider shim protocol v1 (and v1.1: batch create), the wire shapes, field names exactly as
 * GARM's external provider interface uses them (see docs/provider-shim-protocol.md), so a GARM
 * provider can be wrapped in an HTTP shim without translating its JSON.
 */

export const SHIM_INTERFACE_VERSION = "v1";
/** A shim with `POST /v1/instances:batch` says so with this version and `batch_create` in its capabilities. */
export const SHIM_INTERFACE_VERSION_BATCH = "v1.1";
/** A shim with a flavor catalogue (`GET /v1/flavors`) says so with this version and `flavors: true` in its capabilities. */
export const SHIM_INTERFACE_VERSION_FLAVORS = "v1.2";

export const ShimHeaders = {
  controllerId: "X-Edgerunner-Controller-Id",
  poolId: "X-Edgerunner-Pool-Id",
  poolExtraSpecs: "X-Edgerunner-Pool-Extra-Specs",
  timestamp: "X-Edgerunner-Timestamp",
  signature: "X-Edgerunner-Signature",
} as const;

export const bootstrapArches = ["amd64", "i386", "arm64", "arm"] as const;
export const bootstrapOsTypes = ["linux", "windows", "unknown"] as const;

/** GitHub's runner download record, as GARM forwards it (every field may be omitted). */
export const RunnerTool = z
  .object({
    os: z.string().optional(),
    architecture: z.string().optional(),
    download_url: z.string().optional(),
    filename: z.string().optional(),
    temp_download_token: z.string().optional(),
    sha256_checksum: z.string().optional(),
  })
  .openapi("RunnerTool");

export const UserDataOptions = z
  .object({
    disable_updates_on_boot: z.boolean(),
    extra_packages: z.array(z.string()).nullable(),
    enable_boot_debug: z.boolean(),
  })
  .openapi("UserDataOptions");

export const ProxyConfig = z
  .object({
    http_proxy: z.string(),
    https_proxy: z.string(),
    no_proxy: z.string(),
  })
  .openapi("ProxyConfig");

/** v1.2: the parts of a job's shape a shim applies itself (the flavor and image are chosen by the coordinator). */
export const InstanceShape = z
  .object({
    /** Root disk size in GB; null: the pool's extra specs (or the cloud's default) decide. */
    disk_gb: z.number().int().min(1).max(65_536).nullable(),
    /** Run the machine on spot (preemptible) capacity; false: the pool's extra specs decide. */
    spot: z.boolean(),
  })
  .openapi("InstanceShape");
export type InstanceShape = z.infer<typeof InstanceShape>;

/** The body of `POST /v1/instances`: everything a shim needs to boot one runner machine. */
export const BootstrapInstance = z
  .object({
    name: z.string().min(1),
    tools: z.array(RunnerTool),
    repo_url: z.string(),
    "callback-url": z.string(),
    "metadata-url": z.string(),
    /** The instance's own bearer token for the callback and metadata routes. A secret: never log it. */
    "instance-token": z.string(),
    "ssh-keys": z.array(z.string()).nullable(),
    /** The scale set's extra specs, opaque to the coordinator. */
    extra_specs: z.unknown().optional(),
    "github-runner-group": z.string(),
    /** base64 of a PEM bundle, or null. */
    "ca-cert-bundle": z.string().nullable(),
    arch: z.enum(bootstrapArches),
    os_type: z.enum(bootstrapOsTypes),
    flavor: z.string(),
    image: z.string(),
    pool_id: z.string(),
    /** Null when the runner is configured just in time (the labels are in the JIT config). */
    labels: z.array(z.string()).nullable(),
    user_data_options: UserDataOptions,
    jit_config_enabled: z.boolean(),
    proxy_config: ProxyConfig.optional(),
    /**
     * v1.2, only for a machine of a shaped scale set (only sent to a shim offering `flavors`):
     * what the job asked for beyond its flavor and image, which the shim applies over the
     * pool's extra specs. GARM's BootstrapInstance has no such key; GARM providers ignore it.
     */
    shape: InstanceShape.optional(),
  })
  .openapi("BootstrapInstance");
export type BootstrapInstance = z.infer<typeof BootstrapInstance>;

export const addressTypes = ["public", "private"] as const;

// Go's encoding/json writes nil slices and pointers as null; a shim built on GARM's types will too.
const opt = <T extends z.ZodType>(schema: T) => schema.nullish();

/** A machine as a shim reports it. Every field is optional on the wire, as in GARM. */
export const ProviderInstance = z
  .object({
    provider_id: opt(z.string()),
    name: opt(z.string()),
    os_type: opt(z.string()),
    os_name: opt(z.string()),
    os_version: opt(z.string()),
    os_arch: opt(z.string()),
    addresses: opt(z.array(z.object({ address: z.string(), type: z.enum(addressTypes) }))),
    status: opt(z.string()),
    /** base64 of the cloud's error output, as GARM's []byte field marshals. */
    provider_fault: opt(z.string()),
  })
  .openapi("ProviderInstance");
export type ProviderInstance = z.infer<typeof ProviderInstance>;

/** The only statuses a shim may report (GARM's rule). */
export const providerInstanceStatuses = ["running", "error", "stopped", "unknown"] as const;
export type ProviderInstanceStatus = (typeof providerInstanceStatuses)[number];

/** A ProviderInstance the coordinator may act on: GARM rejects anything else. */
export const ValidProviderInstance = ProviderInstance.extend({
  provider_id: z.string().min(1, "provider_id must be a non-empty string"),
  name: z.string().min(1, "name must be a non-empty string"),
  status: z.enum(providerInstanceStatuses, {
    error: `status must be one of ${providerInstanceStatuses.join(", ")}`,
  }),
});
export type ValidProviderInstance = z.infer<typeof ValidProviderInstance>;

export type Validation<T> = { ok: true; value: T } | { ok: false; problems: string[] };

const problemsOf = (error: z.ZodError) => error.issues.map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`);

/** Applies GARM's validity rule to whatever a shim sent. */
export function validateProviderInstance(raw: unknown): Validation<ValidProviderInstance> {
  const parsed = ValidProviderInstance.safeParse(raw);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problems: problemsOf(parsed.error) };
}

export function validateProviderInstanceList(raw: unknown): Validation<ValidProviderInstance[]> {
  const parsed = z.array(ValidProviderInstance).safeParse(raw);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problems: problemsOf(parsed.error) };
}

/** `provider_fault` decoded to text for people to read; the raw value when it is not base64 of UTF-8. */
export function providerFaultText(fault: string | null | undefined): string | undefined {
  if (!fault) return undefined;
  try {
    const binary = atob(fault);
    const bytes = Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return fault;
  }
}

/** The 202 answer of a create or delete the shim finishes later. */
export const OperationAccepted = z.object({ operation_id: z.string().min(1).max(256) }).openapi("ShimOperationAccepted");
export type OperationAccepted = z.infer<typeof OperationAccepted>;

/** v1.1: the shim takes `POST /v1/instances:batch` with at most `max` instances. */
export const BatchCreateCapability = z.object({ max: z.number().int().min(1) }).openapi("ShimBatchCreateCapability");

/**
 * `GET /v1/capabilities`. Unknown keys are kept: later versions may add some. No `batch_create`:
 * no batch (a v1 shim). No `flavors: true`: no flavor catalogue (before v1.2), so no shaped scale set.
 */
export const ShimCapabilities = z
  .looseObject({
    interface_version: z.string(),
    async: z.boolean(),
    batch_create: BatchCreateCapability.optional(),
    flavors: z.boolean().optional(),
  })
  .openapi("ShimCapabilities");
export type ShimCapabilities = z.infer<typeof ShimCapabilities>;

/** The body of `POST /v1/instances:batch` (v1.1): instances of one pool, each exactly the body of a single create. */
export const BatchCreateRequest = z.object({ instances: z.array(BootstrapInstance).min(1) }).openapi("ShimBatchCreateRequest");
export type BatchCreateRequest = z.infer<typeof BatchCreateRequest>;

/**
 * One instance's answer in a batch: the status and body `POST /v1/instances` would have
 * answered for it alone (201/200 a ProviderInstance, 202 `{operation_id}`, an error status
 * `{error}`), so shims and the coordinator read each item with the single create's rules.
 */
export const BatchCreateItemResult = z
  .object({ name: z.string().min(1), status: z.number().int().min(100).max(599), body: z.unknown() })
  .openapi("ShimBatchCreateItemResult");
export type BatchCreateItemResult = z.infer<typeof BatchCreateItemResult>;

/** The 200 answer of `POST /v1/instances:batch`: one result per requested instance. */
export const BatchCreateResponse = z.object({ results: z.array(BatchCreateItemResult) }).openapi("ShimBatchCreateResponse");
export type BatchCreateResponse = z.infer<typeof BatchCreateResponse>;

/**
 * A shim's check of a batch create body (after the signature): a batch is refused whole, with
 * nothing made, if it is malformed, has an invalid item, an item of another pool than the
 * request's, a name twice, or more than `max` instances (`too_large`: answer 413).
 */
export function validateBatchCreate(
  raw: unknown,
  poolId: string,
  max: number,
): { ok: true; value: BootstrapInstance[] } | { ok: false; tooLarge: boolean; problems: string[] } {
  const parsed = BatchCreateRequest.safeParse(raw);
  if (!parsed.success) return { ok: false, tooLarge: false, problems: problemsOf(parsed.error) };
  const items = parsed.data.instances;
  if (items.length > max)
    return { ok: false, tooLarge: true, problems: [`instances: ${items.length} is more than the largest batch, ${max}`] };
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    if (item.pool_id !== poolId) problems.push(`instances.${i}.pool_id: differs from X-Edgerunner-Pool-Id`);
    if (seen.has(item.name)) problems.push(`instances.${i}.name: ${item.name} appears twice`);
    seen.add(item.name);
  }
  return problems.length ? { ok: false, tooLarge: false, problems } : { ok: true, value: items };
}

export const ShimCallbackError = z
  .strictObject({ message: z.string().max(16 * 1024), retryable: z.boolean() })
  .openapi("ShimCallbackError");

/**
 * What a shim POSTs to `/api/v1/providers/{name}/callbacks` when an accepted operation ends.
 * A finished create carries `result`; a finished delete carries neither; a failure carries
 * `error`; never both. `result` is checked with GARM's rule by whoever applies it, so a
 * malformed machine becomes a provider fault on the instance rather than a refused callback
 * the shim would retry forever.
 */
export const ShimCallback = z
  .strictObject({
    operation_id: z.string().min(1).max(256),
    instance_name: z.string().min(1).max(128),
    result: ProviderInstance.nullable(),
    error: ShimCallbackError.nullable(),
  })
  .refine((c) => c.result === null || c.error === null, {
    message: "result and error cannot both be set",
    path: ["result"],
  })
  .openapi("ShimCallback");
export type ShimCallback = z.infer<typeof ShimCallback>;

/** v1.2: one machine size the cloud offers, as `GET /v1/flavors` lists it. */
export const Flavor = z
  .object({
    /** The cloud's name for it, sent back as the create's `flavor`: `c7a.xlarge`, `n2-standard-4`, `cax21`. */
    name: z.string().min(1).max(128),
    vcpus: z.number().int().min(1),
    memory_mib: z.number().int().min(1),
    architecture: z.enum(bootstrapArches),
    /** The cloud's family or series, lower case: `c7a`, `n2`, `cax`. What a job's `family=` names. */
    family: z.string().min(1).max(64),
    gpu: z.object({ count: z.number().int().min(1), model: z.string().min(1).max(128) }).nullish(),
    /** The disk that comes with it (a fixed local disk, as Hetzner's); null: the disk is sized per machine. */
    disk_gb: z.number().int().min(1).nullish(),
    /** On-demand price per hour in the catalogue's `currency`, where the cloud publishes one. */
    price_per_hour: z.number().min(0).nullish(),
    /** Whether it can be had on spot (preemptible) capacity. */
    spot: z.boolean(),
  })
  .openapi("ShimFlavor");
export type Flavor = z.infer<typeof Flavor>;

/** The 200 answer of `GET /v1/flavors` (v1.2): the sizes this pool may be given, with prices in one currency. */
export const FlavorCatalogue = z
  .object({
    flavors: z.array(Flavor).max(5_000),
    /** ISO 4217 code of every `price_per_hour` (USD when absent). */
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/)
      .default("USD"),
  })
  .openapi("ShimFlavorCatalogue");
export type FlavorCatalogue = z.infer<typeof FlavorCatalogue>;

/** A catalogue a shim sent, checked: one invalid flavor or a name twice spoils it (a choice must never rest on half a list). */
export function validateFlavorCatalogue(raw: unknown): Validation<FlavorCatalogue> {
  const parsed = FlavorCatalogue.safeParse(raw);
  if (!parsed.success) return { ok: false, problems: problemsOf(parsed.error) };
  const seen = new Set<string>();
  const twice = parsed.data.flavors.filter((f) => seen.size === seen.add(f.name).size).map((f) => `flavors: ${f.name} appears twice`);
  return twice.length ? { ok: false, problems: twice } : { ok: true, value: parsed.data };
}
