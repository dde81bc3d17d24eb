/**
 * A cloud behind a shim Worker, for the end-to-end scenarios (e2e/scenario-runner.ts): what the
 * runner needs to know about it, so a cloud's scenario lives in a file of its own
 * (e2e/hetzner-cloud.ts).
 */
import type { SimulatorConfig } from "../shims/simulator/machine.ts";

export interface CloudUnderTest {
  /** The provider name registered with the coordinator. */
  provider: string;
  /** The scale sets' image and flavor on this cloud. */
  image: string;
  flavor: string;
  /** The cloud's machines not yet gone, by pool. */
  liveMachines(): Promise<{ pool_id: string; name: string }[]>;
  /** Every machine the cloud ever made, and the creates that made one. */
  created(): Promise<{ machines: number; createCalls: number }>;
  stop(): Promise<void>;
}

export type StartCloud = (ctx: {
  coordinator: { api(method: string, path: string, body?: unknown): Promise<any> };
  sim: SimulatorConfig;
  log: (line: object) => void;
}) => Promise<CloudUnderTest>;
