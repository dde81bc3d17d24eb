import { z } from "zod";
import { bootstrapArches, bootstrapOsTypes, ProxyConfig, RunnerTool, UserDataOptions } from "../../src/providers/shim-protocol.ts";

/**
 * What the bridge requires of a create's body before handing it to the provider byte for byte.
 * GARM's providers decode the BootstrapInstance with Go's encoding/json, where a missing key
 * or a null is the field's zero value (an empty string, slice or struct, false). So only the
 * instance name is required — the bridge answers for it — and every other field, when present
 * and not null, must have GARM's type. The coordinator always sends every field; other
 * callers (GARM's own tooling, older coordinators) need not.
 */

const opt = <T extends z.ZodType>(schema: T) => schema.nullish();

export const GarmBootstrapBody = z.object({
  name: z.string().min(1),
  /** Must equal X-Edgerunner-Pool-Id when present. */
  pool_id: opt(z.string()),
  /** A secret: the bridge redacts it from the provider's output. */
  "instance-token": opt(z.string()),
  tools: opt(z.array(RunnerTool)),
  repo_url: opt(z.string()),
  "callback-url": opt(z.string()),
  "metadata-url": opt(z.string()),
  "ssh-keys": opt(z.array(z.string())),
  extra_specs: z.unknown().optional(),
  "github-runner-group": opt(z.string()),
  "ca-cert-bundle": opt(z.string()),
  arch: opt(z.enum(bootstrapArches)),
  os_type: opt(z.enum(bootstrapOsTypes)),
  flavor: opt(z.string()),
  image: opt(z.string()),
  labels: opt(z.array(z.string())),
  user_data_options: opt(
    z.object({
      disable_updates_on_boot: opt(UserDataOptions.shape.disable_updates_on_boot),
      extra_packages: opt(z.array(z.string())),
      enable_boot_debug: opt(UserDataOptions.shape.enable_boot_debug),
    }),
  ),
  jit_config_enabled: opt(z.boolean()),
  proxy_config: opt(ProxyConfig.partial()),
});
export type GarmBootstrapBody = z.infer<typeof GarmBootstrapBody>;
