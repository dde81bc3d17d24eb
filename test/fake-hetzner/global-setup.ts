/// <reference path="./provided-context.d.ts" />
import type { TestProject } from "vitest/node";
import { startFakeHetzner } from "./server.ts";

/** Starts one fake Hetzner Cloud (in Node) for the whole run; workerd tests reach it over loopback, one project each. */
export default async function setup(project: TestProject) {
  const hetzner = await startFakeHetzner();
  project.provide("fakeHetznerUrl", hetzner.url);
  return () => hetzner.stop();
}
