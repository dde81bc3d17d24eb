import type { ScaleSetRecord } from "../db/scaleset-store";
import type { Env } from "../env";
import type { MachinePort, RunnerPort } from "./ports";

/** Builds the shim and GitHub adapters for one scale set. */
export function createScaleSetPorts(_env: Env, _ss: ScaleSetRecord, _providerSecret: string): { machines: MachinePort; runners: RunnerPort } {
  throw new Error("ports are wired when the shim client and GitHub client land");
}

/** GitHub's runner downloads for a scale set's entity (cached by the GitHub client). */
export async function runnerToolsForScaleSet(_env: Env, _scaleSetId: string): Promise<import("./ports").RunnerTool[]> {
  throw new Error("wired when the GitHub client lands");
}
