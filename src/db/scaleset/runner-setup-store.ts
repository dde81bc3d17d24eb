import { readMachineShape } from "../../shapes/machine-shape";
import { runnerLabels } from "../../shapes/runner-labels";
import type { Forge } from "../github/schema";
import type { ScaleSetRecord } from "./snapshot-store";

/** What a booting machine is told about its runner: labels, group, OS, and where GitHub is. */
export interface RunnerSetup {
  scaleSetId: string;
  labels: string[];
  runnerGroup: string;
  osType: string;
  osArch: string;
  entity: ScaleSetRecord["entity"];
  /** The credentials that may mint its JIT config: the entity's own first, then its pool's (entity_credentials). */
  pool: string[];
  baseUrl: string;
  caCertBundle: string | null;
  /** The endpoint's forge, and (Gitea, Forgejo) the runner binary's URL and SHA-256 set on the scale set (null: the documented default). */
  forge: Forge;
  runnerDownloadUrl: string | null;
  runnerDownloadSha256: string | null;
}

export async function loadRunnerSetup(db: D1Database, scaleSetId: string, instanceName: string): Promise<RunnerSetup | null> {
  return runnerSetupFromRow(scaleSetId, await runnerSetupStatement(db, scaleSetId, instanceName).first<Record<string, any>>());
}

/**
 * loadRunnerSetup's statement, for a caller that batches it with another read (instance-store's
 * findInstanceAndSetup). A shaped machine's labels are its scale set's and its job's shape labels.
 */
export function runnerSetupStatement(db: D1Database, scaleSetId: string, instanceName: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT s.labels, s.runner_group, s.os_type, s.os_arch, e.id AS entity_id, e.kind, e.owner, e.name, e.endpoint_name, e.credentials_id,
              g.base_url, g.ca_cert_bundle, g.forge, s.runner_download_url, s.runner_download_sha256,
              (SELECT i.shape FROM instances i WHERE i.name = ?2 AND i.scale_set_id = s.id) AS instance_shape,
              (SELECT group_concat(credential_id, ',') FROM (SELECT credential_id FROM entity_credentials
                WHERE entity_id = e.id AND credential_id <> e.credentials_id ORDER BY added_at, credential_id)) AS pool_ids
         FROM scale_sets s JOIN entities e ON e.id = s.entity_id JOIN github_endpoints g ON g.name = e.endpoint_name
        WHERE s.id = ?1`,
    )
    .bind(scaleSetId, instanceName);
}

export function runnerSetupFromRow(scaleSetId: string, r: Record<string, any> | null | undefined): RunnerSetup | null {
  if (!r) return null;
  return {
    scaleSetId,
    labels: runnerLabels(JSON.parse(r.labels), readMachineShape(r.instance_shape)),
    runnerGroup: r.runner_group,
    osType: r.os_type,
    osArch: r.os_arch,
    entity: {
      id: r.entity_id,
      kind: r.kind,
      owner: r.owner,
      name: r.name,
      endpointName: r.endpoint_name,
      credentialsId: r.credentials_id,
      forge: r.forge,
    },
    baseUrl: r.base_url,
    caCertBundle: r.ca_cert_bundle,
    forge: r.forge ?? "github",
    runnerDownloadUrl: r.runner_download_url ?? null,
    runnerDownloadSha256: r.runner_download_sha256 ?? null,
    pool: [r.credentials_id, ...(r.pool_ids ? String(r.pool_ids).split(",") : [])],
  };
}
