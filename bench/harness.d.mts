// Types for harness.mjs, so TypeScript callers (the e2e and browser tests) can share it with the benchmarks.
import type { ChildProcess } from "node:child_process";

export const root: string;
export function note(msg: string): void;
export function sleep(ms: number): Promise<void>;
export function freePort(): Promise<number>;
export function applyLocalMigrations(configPath: string, state: string, opts: { cwd: string; env: NodeJS.ProcessEnv }): void;
export function freshJobTimes<P extends { workflow_job: Record<string, unknown> }>(payload: P, now?: number): P;
export function percentile(sorted: number[], p: number): number | null;
export function summarize(samples: number[]): { n: number; p50_ms: number | null; p99_ms: number | null; max_ms: number | null };
export function startNodeScript(script: string, args?: string[]): Promise<{ proc: ChildProcess; info: any }>;

export interface Coordinator {
  url: string;
  port: number;
  api(method: string, path: string, body?: unknown): Promise<any>;
  sql(file: string): void;
  work: string;
  stop(): Promise<void>;
  /** SIGKILL, then start again on the same port and persisted state. */
  restart(): Promise<void>;
  /** Kills it and keeps it down for `ms` (nothing reaches it, nothing of it runs), then starts it again on its persisted state. */
  outage(ms: number, during?: () => Promise<void>): Promise<void>;
  /** SIGKILL now (synchronous, for exit handlers). */
  killNow(): void;
  devVars: Record<string, string>;
  /** CPU seconds used so far by workerd (the Worker) and wrangler (its dev proxy); null without /proc. */
  cpuSeconds(): ProcessGroupCpu | null;
  /** wrangler dev's process group (its workerd is in it), while it runs. */
  processGroup(): number | null;
  /** wrangler dev's inspector port (DevTools protocol of the Worker's isolate), when started with one. */
  inspectorPort: number;
}
export interface ProcessGroupCpu {
  workerd: number;
  wrangler: number;
  /** The workerd processes counted: another set means workerd was restarted in between. */
  workerdPids: number[];
}
export function processGroupCpu(pgid: number): ProcessGroupCpu | null;
/**
 * opts.log: append the coordinator's log lines to this file; opts.inspectorPort: wrangler dev's
 * --inspector-port; opts.localObservability false: without wrangler dev's local trace collector (X_LOCAL_OBSERVABILITY=false).
 */
export function startCoordinator(
  vars?: Record<string, string>,
  opts?: { log?: string; inspectorPort?: number; localObservability?: boolean },
): Promise<Coordinator>;
/** V8's sampling profiler in the Worker's isolate, through wrangler dev's inspector on `port`; stop() gives the profile and its bundle. */
export function startCpuProfile(port: number): Promise<{ stop(): Promise<{ profile: any; source: string | undefined }> }>;
