/**
 * Where the deploy configs live and how they are read and written (deploy-config.ts makes their
 * text). Used by `edgerunner setup` and by `npm run deploy` (scripts/deploy.mjs), which
 * regenerates the file from the committed one before every deploy.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../errors.ts";
import { DEPLOY_CONFIG_NAME, type DeploySettings, readDeploySettings, renderDeployConfig } from "./deploy-config.ts";

/** A Worker this repository deploys: its folder (relative to the checkout's root) holds its wrangler.toml. */
export interface WorkerTarget {
  /** How progress lines name it. */
  label: string;
  dir: string;
}

export const COORDINATOR: WorkerTarget = { label: "coordinator", dir: "." };
export const AWS_EC2_SHIM: WorkerTarget = { label: "EC2 shim", dir: "shims/aws-ec2" };
export const HETZNER_SHIM: WorkerTarget = { label: "Hetzner shim", dir: "shims/hetzner" };
export const GCE_SHIM: WorkerTarget = { label: "GCE shim", dir: "shims/gce" };

/** Paths as commands show them: relative to the root, with forward slashes. */
export const committedConfig = (t: WorkerTarget) => (t.dir === "." ? "wrangler.toml" : `${t.dir}/wrangler.toml`);
export const deployConfig = (t: WorkerTarget) => (t.dir === "." ? DEPLOY_CONFIG_NAME : `${t.dir}/${DEPLOY_CONFIG_NAME}`);

export function readCommittedConfig(root: string, t: WorkerTarget): string {
  const path = join(root, committedConfig(t));
  if (!existsSync(path)) {
    throw new UsageError(`no ${committedConfig(t)} here (${root})`, "run it from the root of an Edgerunner checkout, after `npm ci`");
  }
  return readFileSync(path, "utf8");
}

/** The settings the last setup wrote for this Worker, or undefined before the first. */
export function readSettings(root: string, t: WorkerTarget): DeploySettings | undefined {
  const path = join(root, deployConfig(t));
  return existsSync(path) ? readDeploySettings(readFileSync(path, "utf8")) : undefined;
}

/** The deploy config's text for these settings, from the committed file as it is now. */
export const renderedDeployConfig = (root: string, t: WorkerTarget, settings: DeploySettings) =>
  renderDeployConfig(readCommittedConfig(root, t), settings, committedConfig(t));

export function writeDeployConfig(root: string, t: WorkerTarget, settings: DeploySettings): void {
  writeFileSync(join(root, deployConfig(t)), renderedDeployConfig(root, t, settings));
}

/**
 * The deploy config to use: setup's, rewritten from the committed file (which may have changed
 * since) with the settings it holds; one written by hand, as it is; undefined when there is
 * none (deploy the committed file).
 */
export function refreshDeployConfig(root: string, t: WorkerTarget): string | undefined {
  if (!existsSync(join(root, deployConfig(t)))) return undefined;
  const settings = readSettings(root, t);
  if (settings) writeDeployConfig(root, t, settings);
  return deployConfig(t);
}
