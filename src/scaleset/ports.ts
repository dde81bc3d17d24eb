/**
 * What the ScaleSet object needs from the outside world, as narrow interfaces: the provider
 * shim for machines and GitHub for runner registrations. The adapters live in src/providers
 * and src/github; the object never sees an HTTP detail.
 */

export type ProviderInstanceStatus = "running" | "error" | "stopped" | "unknown";

export interface MachineInfo {
  provider_id: string;
  name: string;
  status: ProviderInstanceStatus;
  os_type?: string | undefined;
  os_name?: string | undefined;
  os_version?: string | undefined;
  os_arch?: string | undefined;
  addresses?: { address: string; type: "public" | "private" }[] | undefined;
  provider_fault?: string | undefined;
}

export type PortErrorKind = "not_found" | "duplicate" | "permanent" | "retryable" | "malformed";
export interface PortError {
  kind: PortErrorKind;
  message: string;
  status?: number | undefined;
}
export type PortResult<T> = { ok: true; value: T } | { ok: false; error: PortError };

export type CreateOutcome = { state: "done"; instance: MachineInfo } | { state: "accepted"; operationId: string };
export type DeleteOutcome = { state: "done" } | { state: "accepted"; operationId: string };

export interface MachinePort {
  createInstance(bootstrap: Record<string, unknown>): Promise<PortResult<CreateOutcome>>;
  getInstance(idOrName: string): Promise<PortResult<MachineInfo>>;
  deleteInstance(idOrName: string): Promise<PortResult<DeleteOutcome>>;
  listInstances(): Promise<PortResult<MachineInfo[]>>;
}

export interface RunnerTool {
  os: string;
  architecture: string;
  download_url: string;
  filename: string;
  temp_download_token?: string | null | undefined;
  sha256_checksum?: string | null | undefined;
}

export type RunnerRemoval = "removed" | "gone" | "busy";

export interface RunnerPort {
  createJitRunner(input: { name: string; labels: string[]; runnerGroup: string }): Promise<{ runnerId: number; encodedJitConfig: string }>;
  removeRunner(runnerId: number): Promise<RunnerRemoval>;
  listRunners(): Promise<{ id: number; name: string; busy: boolean }[]>;
  runnerDownloads(): Promise<RunnerTool[]>;
}
