/**
 * vitest globalSetup (runs in Node): one fake GitHub for the test run; tests reach it at
 * inject("fakeGithubUrl") and each makes its own world there.
 */
import type { TestProject } from "vitest/node";
import { startFakeGithub } from "./server.ts";

export default async function setup(project: TestProject) {
  const fake = await startFakeGithub();
  project.provide("fakeGithubUrl", fake.url);
  return () => fake.close();
}
