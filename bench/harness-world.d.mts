// Types for harness-world.mjs, so TypeScript callers (the e2e and browser tests) can share it with the benchmarks.
import type { Coordinator } from "./harness.mjs";

export interface HarnessWorld {
  world: { id: string; url: string; ghes_url: string };
  repo: { id: string; [k: string]: unknown };
  webhookSecret: string;
  tenant: { id: string; url: string };
  provider: string;
  shimControl: string;
  /** The fake GitHub's endpoint and the repository's credentials, by their names at the coordinator. */
  endpoint: string;
  credentials: string;
}
/** The browser test's name for it. */
export type FakeWorldSetup = HarnessWorld;
export function fakeWorld(
  coordinator: Coordinator,
  fakeGithubUrl: string,
  fakeShimUrl: string,
  secret?: string,
  providerOver?: Record<string, unknown>,
): Promise<HarnessWorld>;
export function deliverWebhook(coordinator: Coordinator, secret: string, payload: unknown, event?: string): Promise<Response>;
