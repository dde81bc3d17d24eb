import type { RunnerDownload } from "../github/runners";
/**
 * What the ScaleSet object needs from the outside world, as narrow interfaces: the provider
 * shim for machines and GitHub for runner registrations. The adapters live in src/providers
 * and src/github; the object never sees an HTTP detail.
 */

import type { ShimClient } from "../providers/shim-client";
import type { ValidProviderInstance } from "../providers/shim-protocol";

export type { ShimError as PortError, ShimResult as PortResult } from "../providers/shim-client";

/** A machine as a shim reports it, already checked with GARM's validity rule. */
export type MachineInfo = ValidProviderInstance;

/** The provider shim: the shim client is the adapter. */
export type MachinePort = Pick<ShimClient, "createInstance" | "getInstance" | "deleteInstance" | "listInstances">;

/** A runner download as GitHub lists it (os, architecture, URL, temporary token, checksum). */
export type RunnerTool = RunnerDownload;

export type RunnerRemoval = "removed" | "gone" | "busy";

/** A runner as GitHub lists it, as far as the scale set cares. */
export interface GithubRunnerInfo {
  id: number;
  name: string;
  busy: boolean;
}

export interface RunnerPort {
  createJitRunner(input: { name: string; labels: string[]; runnerGroup: string }): Promise<{ runnerId: number; encodedJitConfig: string }>;
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
