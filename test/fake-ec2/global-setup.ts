/// <reference path="./provided-context.d.ts" />
import type { TestProject } from "vitest/node";
import { startFakeEc2 } from "./server.ts";

/** Starts one fake EC2 (in Node) for the whole run; workerd tests reach it over loopback, one account each. */
export default async function setup(project: TestProject) {
  const ec2 = await startFakeEc2();
  project.provide("fakeEc2Url", ec2.url);
  return () => ec2.stop();
}
