/// <reference path="./provided-context.d.ts" />
import type { TestProject } from "vitest/node";
import { startFakeGce } from "./server.ts";

/** Starts one fake Compute Engine (in Node) for the whole run; workerd tests reach it over loopback, one project each. */
export default async function setup(project: TestProject) {
  const gce = await startFakeGce();
  project.provide("fakeGceUrl", gce.url);
  return () => gce.stop();
}
