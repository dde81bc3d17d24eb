/**
 * vitest globalSetup (runs in Node): one fake Forgejo for the test run; tests reach it at
 * inject("fakeForgejoUrl") and each makes its own world there (POST /_fake/worlds).
 */
import type { TestProject } from "vitest/node";
import { startFakeForgejo } from "./server.ts";

export default async function setup(project: TestProject) {
  const fake = await startFakeForgejo();
  project.provide("fakeForgejoUrl", fake.url);
  return () => fake.close();
}
