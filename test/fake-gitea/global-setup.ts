/**
 * vitest globalSetup (runs in Node): one fake Gitea for the test run; tests reach it at
 * inject("fakeGiteaUrl") and each makes its own world there (control-client.ts).
 */
import type { TestProject } from "vitest/node";
import { startFakeGitea } from "./server.ts";

export default async function setup(project: TestProject) {
  const fake = await startFakeGitea();
  project.provide("fakeGiteaUrl", fake.url);
  return () => fake.close();
}
