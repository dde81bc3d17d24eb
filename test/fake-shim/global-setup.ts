/// <reference path="./provided-context.d.ts" />
import type { TestProject } from "vitest/node";
import { startFakeShim } from "./server.ts";

/** Starts one fake shim (in Node) for the whole run; workerd tests reach it over loopback. */
export default async function setup(project: TestProject) {
  const shim = await startFakeShim();
  project.provide("fakeShimUrl", shim.url);
  return () => shim.stop();
}
