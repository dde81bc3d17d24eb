import { describe, expect, it } from "vitest";
import { pathOf, protocolPath, signedTarget } from "../../../shims/garm-bridge/request-target";

describe("request targets", () => {
  it("routes on the protocol path, whether or not a proxy stripped the base path", () => {
    expect(protocolPath("/lxd/v1/instances?x=1", "/lxd")).toBe("/v1/instances");
    expect(protocolPath("/v1/instances", "/lxd")).toBe("/v1/instances");
    expect(protocolPath("/lxd/healthz", "/lxd")).toBe("/healthz");
    expect(protocolPath("/lxdx/v1/instances", "/lxd")).toBe("/lxdx/v1/instances");
    expect(protocolPath("/v1/instances/a%2Fb", "")).toBe("/v1/instances/a%2Fb");
  });

  it("checks the signature over the target the coordinator sent, base path put back when stripped", () => {
    expect(signedTarget("/lxd/v1/instances?x=1", "/lxd")).toBe("/lxd/v1/instances?x=1");
    expect(signedTarget("/v1/instances?x=1", "/lxd")).toBe("/lxd/v1/instances?x=1");
    expect(signedTarget("/healthz", "/lxd")).toBe("/healthz");
    expect(signedTarget("/v1/instances", "")).toBe("/v1/instances");
  });

  it("takes the path of a target without its query", () => {
    expect(pathOf("/a/b?c=d?e")).toBe("/a/b");
    expect(pathOf("/a")).toBe("/a");
  });
});
