import type { ScaleSetRecord } from "../../db/scaleset/snapshot-store";
import type { BootstrapInstance } from "../../providers/shim-protocol";
import type { MachineShape } from "../../shapes/machine-shape";
import { runnerLabels } from "../../shapes/runner-labels";
import type { RunnerTool } from "../ports";

/**
 * Whether the scale set's runners get their JIT config when their machine first asks for it
 * (routes/metadata.ts) rather than from the object before the create. The scale set API's JIT
 * comes from its own endpoint, through the object: always before the create.
 */
export const mintsJitOnBoot = (ss: Pick<ScaleSetRecord, "jitConfigEnabled" | "jitConfigTiming" | "intake">): boolean =>
  ss.jitConfigEnabled && ss.jitConfigTiming === "on_boot" && ss.intake === "webhook";

/**
 * How long a new machine's instance token lasts (before its 5 minutes' grace): the bootstrap
 * timeout, twice it when the machine mints its JIT config on boot, so a machine that waited in
 * line for the GitHub budget (up to about one timeout) still has a whole one after its mint.
 */
export const tokenMinutes = (ss: Pick<ScaleSetRecord, "bootstrapTimeout" | "jitConfigEnabled" | "jitConfigTiming" | "intake">): number =>
  ss.bootstrapTimeout * (mintsJitOnBoot(ss) ? 2 : 1);

/** Where a new machine finds its runner: the GitHub URL of the entity it registers with. */
export function entityUrl(ss: Pick<ScaleSetRecord, "entity"> & { endpoint: { baseUrl: string; caCertBundle?: string | null } }): string {
  const base = ss.endpoint.baseUrl.replace(/\/+$/, "");
  const e = ss.entity;
  if (e.kind === "repository") return `${base}/${e.owner}/${e.name}`;
  if (e.kind === "organization") return `${base}/${e.owner}`;
  return `${base}/enterprises/${e.owner}`;
}

const toBase64 = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));

/**
 * The GARM `BootstrapInstance` a shim receives on create (key names exactly as GARM's, hyphens
 * included), so GARM's providers and images work unchanged. With JIT the runner's labels are
 * inside its JIT config (served by the metadata URL), so `labels` is null as in GARM; without,
 * the machine runs config.sh itself and needs them.
 */
export function buildBootstrapInstance(input: {
  scaleSet: ScaleSetRecord;
  name: string;
  token: string;
  publicUrl: string;
  tools: RunnerTool[];
  /** A shaped scale set's machine: its flavor, image, architecture and the rest of its shape (protocol v1.2). */
  shape?: MachineShape;
}): BootstrapInstance {
  const { shape } = input;
  const { scaleSet: ss } = input;
  const base = input.publicUrl.replace(/\/+$/, "");
  return {
    name: input.name,
    tools: input.tools.map((t) => ({
      os: t.os,
      architecture: t.architecture,
      download_url: t.download_url,
      filename: t.filename,
      ...(t.temp_download_token ? { temp_download_token: t.temp_download_token } : {}),
      ...(t.sha256_checksum ? { sha256_checksum: t.sha256_checksum } : {}),
    })),
    repo_url: entityUrl(ss),
    "callback-url": `${base}/api/v1/callbacks`,
    "metadata-url": `${base}/api/v1/metadata`,
    "instance-token": input.token,
    "ssh-keys": [],
    extra_specs: ss.extraSpecs,
    "github-runner-group": ss.runnerGroup,
    "ca-cert-bundle": ss.endpoint.caCertBundle ? toBase64(ss.endpoint.caCertBundle) : null,
    arch: (shape?.arch ?? ss.osArch) as BootstrapInstance["arch"],
    os_type: ss.osType,
    flavor: shape?.flavor ?? ss.flavor,
    image: shape?.image_id ?? ss.image,
    pool_id: ss.id,
    labels: ss.jitConfigEnabled ? null : runnerLabels(ss.labels, shape),
    user_data_options: { disable_updates_on_boot: false, extra_packages: [], enable_boot_debug: false },
    jit_config_enabled: ss.jitConfigEnabled,
    proxy_config: { http_proxy: "", https_proxy: "", no_proxy: "" },
    ...(shape && { shape: { disk_gb: shape.disk_gb, spot: shape.spot } }),
  };
}
