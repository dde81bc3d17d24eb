import type { InstanceAddress } from "../db/runner/schema";
import type { BootstrapInstance, FlavorCatalogue } from "../providers/shim-protocol";

/**
 * What a scale set needs from the outside world, in its own terms: machines from a provider
 * and runner registrations from GitHub. The adapters implement these (the shim client in
 * src/providers, the GitHub runner port in ports-factory.ts); the object never sees an HTTP
 * detail. Machines keep the shim protocol's field names: that protocol is GARM's, and the
 * scale set speaks it to every provider.
 */

/** Why a provider call failed, as the scale set acts on it (retry, give up, treat as gone). */
export type PortErrorKind = "not_found" | "duplicate" | "permanent" | "retryable" | "malformed";

export interface PortError {
  kind: PortErrorKind;
  message: string;
  /** The HTTP status, when the provider answered at all. */
  status?: number;
}

/** Provider calls never throw: every outcome is a value. */
export type PortResult<T> = { ok: true; value: T } | { ok: false; error: PortError };

/** A machine as its provider reports it, already checked with GARM's validity rule. */
export interface MachineInfo {
  provider_id: string;
  name: string;
  status: "running" | "error" | "stopped" | "unknown";
  addresses?: InstanceAddress[] | null;
  os_type?: string | null;
  os_name?: string | null;
  os_version?: string | null;
  os_arch?: string | null;
  /** base64 of the cloud's error output. */
  provider_fault?: string | null;
}

/** A create either finished, or the provider took it on and reports back later (callback or poll). */
export type MachineCreated = { state: "done"; instance: MachineInfo } | { state: "accepted"; operationId: string };
export type MachineDeleted = { state: "done" } | { state: "accepted"; operationId: string };

/** The provider's machines for one scale set. */
export interface MachinePort {
  createInstance(bootstrap: BootstrapInstance): Promise<PortResult<MachineCreated>>;
  /**
   * Many creates in one call (protocol v1.1), only up to batchCreateMax(): one result per
   * bootstrap in order, or the failure of the whole call (nothing answered for any of them).
   */
  createInstances(bootstraps: BootstrapInstance[]): Promise<PortResult<PortResult<MachineCreated>[]>>;
  /** The largest batch the provider takes; 0 when it has no batch create (creates go one by one). */
  batchCreateMax(): Promise<number>;
  /** The machine by provider id or name; `not_found` when the provider has none. */
  getInstance(providerIdOrName: string): Promise<PortResult<MachineInfo>>;
  /** A machine already gone counts as deleted. */
  deleteInstance(providerIdOrName: string): Promise<PortResult<MachineDeleted>>;
  listInstances(): Promise<PortResult<MachineInfo[]>>;
  /** The provider's flavor catalogue for this scale set (protocol v1.2); a shim without one answers 404. */
  flavors(): Promise<PortResult<FlavorCatalogue>>;
}

/** A runner download as GitHub lists it (os, architecture, URL, temporary token, checksum). */
export interface RunnerTool {
  os: string;
  architecture: string;
  download_url: string;
  filename: string;
  temp_download_token?: string;
  sha256_checksum?: string;
}

export type RunnerRemoval = "removed" | "gone" | "busy";

/** A runner as GitHub lists it, as far as the scale set cares. */
export interface GithubRunnerInfo {
  id: number;
  name: string;
  busy: boolean;
}

/** GitHub, for one scale set's entity. */
export interface RunnerPort {
  /** `sendBy`: the call was paid for in a GitHub budget window; not sent after this (GithubSendDeadlineError). */
  createJitRunner(input: {
    name: string;
    labels: string[];
    runnerGroup: string;
    sendBy?: number;
  }): Promise<{ runnerId: number; encodedJitConfig: string }>;
  removeRunner(runnerId: number): Promise<RunnerRemoval>;
  listRunners(): Promise<GithubRunnerInfo[]>;
  /** The runner GitHub has under this id, or null (404). */
  getRunner(runnerId: number): Promise<GithubRunnerInfo | null>;
  /** The runner GitHub has under this name (case-insensitive), or null. */
  findRunnerByName(name: string): Promise<GithubRunnerInfo | null>;
  runnerDownloads(): Promise<RunnerTool[]>;
  /** A one-time token a machine registers a runner with (config.sh), when JIT is off. */
  registrationToken(): Promise<string>;
  /** A job's status at GitHub, or null when GitHub does not show it (404). */
  jobStatus(repository: string, jobId: number): Promise<{ status: string; conclusion: string | null } | null>;
}
