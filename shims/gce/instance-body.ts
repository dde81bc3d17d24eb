import type { ExtraSpecs } from "./extra-specs.ts";
import { LABEL_CONTROLLER, LABEL_POOL } from "./extra-specs.ts";
import { STARTUP_SCRIPT_KEY } from "./startup-script.ts";

/**
 * The instances.insert body for one attempt (zone × provisioning model), from plain inputs.
 * Pure. test/contract/gce-discovery.test.ts checks every field against the discovery
 * document's Instance schema.
 */

export type ProvisioningModel = "STANDARD" | "SPOT";

export interface InsertInput {
  name: string;
  zone: string;
  machineType: string;
  /** An image family or image, as a URL or partial URL. */
  image: string;
  specs: ExtraSpecs;
  /** Label values for the pool and controller (labelValue). */
  poolLabel: string;
  controllerLabel: string;
  startupScript: string;
  model: ProvisioningModel;
}

export const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/** zone → region: us-central1-a → us-central1. */
export const regionOf = (zone: string) => zone.slice(0, zone.lastIndexOf("-"));

function subnetworkUrl(subnetwork: string, zone: string): string {
  return subnetwork.includes("/") ? subnetwork : `regions/${regionOf(zone)}/subnetworks/${subnetwork}`;
}

// biome-ignore lint/suspicious/noExplicitAny: a JSON body whose shape is the discovery document's Instance
export function insertBody(i: InsertInput): Record<string, any> {
  const s = i.specs;
  const nic: Record<string, unknown> = {};
  if (s.network) nic.network = s.network.includes("/") ? s.network : `global/networks/${s.network}`;
  if (s.subnetwork) nic.subnetwork = subnetworkUrl(s.subnetwork, i.zone);
  if (s.external_ip) nic.accessConfigs = [{ type: "ONE_TO_ONE_NAT", name: "External NAT" }];
  const initializeParams: Record<string, unknown> = { sourceImage: i.image };
  if (s.disk_size_gb !== undefined) initializeParams.diskSizeGb = String(s.disk_size_gb);
  if (s.disk_type !== undefined) initializeParams.diskType = `zones/${i.zone}/diskTypes/${s.disk_type}`;
  return {
    name: i.name,
    machineType: `zones/${i.zone}/machineTypes/${i.machineType}`,
    labels: { ...s.labels, [LABEL_CONTROLLER]: i.controllerLabel, [LABEL_POOL]: i.poolLabel },
    ...(s.network_tags ? { tags: { items: s.network_tags } } : {}),
    metadata: { items: [{ key: STARTUP_SCRIPT_KEY, value: i.startupScript }] },
    disks: [{ boot: true, autoDelete: true, type: "PERSISTENT", initializeParams }],
    networkInterfaces: [nic],
    ...(s.service_account ? { serviceAccounts: [{ email: s.service_account, scopes: s.scopes ?? [CLOUD_PLATFORM_SCOPE] }] } : {}),
    scheduling:
      i.model === "SPOT"
        ? // A runner is ephemeral: a preempted one is deleted, not kept stopped.
          { provisioningModel: "SPOT", instanceTerminationAction: "DELETE", automaticRestart: false, onHostMaintenance: "TERMINATE" }
        : { provisioningModel: "STANDARD", automaticRestart: true, onHostMaintenance: "MIGRATE" },
  };
}
