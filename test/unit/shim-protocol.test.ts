import { describe, expect, it } from "vitest";
import {
  BootstrapInstance,
  OperationAccepted,
  ProviderInstance,
  providerFaultText,
  ShimCallback,
  validateProviderInstance,
  validateProviderInstanceList,
} from "../../src/providers/shim-protocol";
import { garmBootstrap } from "../fixtures/bootstrap-instance";

describe("BootstrapInstance", () => {
  it("accepts GARM's field names exactly and keeps them", () => {
    const parsed = BootstrapInstance.parse(garmBootstrap);
    expect(Object.keys(parsed).sort()).toEqual(Object.keys(garmBootstrap).sort());
    expect(parsed["instance-token"]).toBe("instance-token-value");
  });

  it.each([
    ["snake_case instead of GARM's hyphenated keys", { "callback-url": undefined, callback_url: "x" }, "callback-url"],
    ["an unknown arch", { arch: "x86_64" }, "arch"],
    ["an unknown os_type", { os_type: "macos" }, "os_type"],
    ["no instance token", { "instance-token": undefined }, "instance-token"],
    ["an empty name", { name: "" }, "name"],
    ["labels that are not strings", { labels: [1] }, "labels"],
  ])("rejects %s", (_, change, path) => {
    const r = BootstrapInstance.safeParse({ ...garmBootstrap, ...change });
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => String(i.path[0]))).toContain(path);
  });
});

describe("ProviderInstance and GARM's validity rule", () => {
  const good = {
    provider_id: "i-0abc",
    name: "edgerunner-linux-a1b2c3",
    os_type: "linux",
    os_name: "ubuntu",
    os_version: "24.04",
    os_arch: "amd64",
    addresses: [{ address: "10.0.0.4", type: "private" }],
    status: "running",
    provider_fault: null,
  };

  it("treats every field as optional on the wire", () => {
    expect(ProviderInstance.safeParse({}).success).toBe(true);
    expect(ProviderInstance.safeParse({ addresses: null, provider_fault: null }).success).toBe(true);
  });

  it.each(["running", "error", "stopped", "unknown"])("accepts status %s with a provider_id and a name", (status) => {
    const r = validateProviderInstance({ ...good, status });
    expect(r).toEqual({ ok: true, value: { ...good, status } });
  });

  it("accepts the minimum GARM accepts", () => {
    expect(validateProviderInstance({ provider_id: "p", name: "n", status: "unknown" }).ok).toBe(true);
  });

  it.each([
    ["no provider_id", { provider_id: undefined }, "provider_id"],
    ["an empty provider_id", { provider_id: "" }, "provider_id"],
    ["no name", { name: undefined }, "name"],
    ["an empty name", { name: "" }, "name"],
    ["no status", { status: undefined }, "status"],
    ["a status outside running/error/stopped/unknown", { status: "creating" }, "status"],
    ["pending_delete as status", { status: "pending_delete" }, "status"],
    ["a provider_id that is not a string", { provider_id: 42 }, "provider_id"],
    ["an address of unknown type", { addresses: [{ address: "1.2.3.4", type: "elastic" }] }, "addresses"],
  ])("rejects %s", (_, change, field) => {
    const r = validateProviderInstance({ ...good, ...change });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.join("\n")).toContain(field);
  });

  it.each([null, "running", [], 7])("rejects %j as an instance", (raw) => {
    expect(validateProviderInstance(raw).ok).toBe(false);
  });

  it("rejects a whole list when one entry is invalid", () => {
    expect(validateProviderInstanceList([good, good])).toEqual({ ok: true, value: [good, good] });
    const r = validateProviderInstanceList([good, { ...good, provider_id: "" }]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]).toMatch(/^1\.provider_id/);
    expect(validateProviderInstanceList({ instances: [] }).ok).toBe(false);
  });

  it("decodes provider_fault (base64 bytes, as GARM marshals []byte) for people to read", () => {
    expect(providerFaultText(btoa("quota exceeded"))).toBe("quota exceeded");
    expect(providerFaultText("not base64!")).toBe("not base64!");
    expect(providerFaultText(null)).toBeUndefined();
  });
});

describe("async operations", () => {
  it("needs a non-empty operation_id in a 202", () => {
    expect(OperationAccepted.safeParse({ operation_id: "op-1" }).success).toBe(true);
    expect(OperationAccepted.safeParse({ operation_id: "" }).success).toBe(false);
    expect(OperationAccepted.safeParse({}).success).toBe(false);
  });

  it("takes a callback with a result, an error, or neither (a finished delete), never both", () => {
    const base = { operation_id: "op-1", instance_name: "r-1" };
    expect(ShimCallback.safeParse({ ...base, result: { provider_id: "p", name: "r-1", status: "running" }, error: null }).success).toBe(
      true,
    );
    expect(ShimCallback.safeParse({ ...base, result: null, error: { message: "quota", retryable: true } }).success).toBe(true);
    expect(ShimCallback.safeParse({ ...base, result: null, error: null }).success).toBe(true);
    expect(ShimCallback.safeParse({ ...base, result: { name: "r-1" }, error: { message: "x", retryable: false } }).success).toBe(false);
    expect(ShimCallback.safeParse({ ...base, result: null }).success).toBe(false);
    expect(ShimCallback.safeParse({ ...base, result: null, error: { message: "x" } }).success).toBe(false);
    expect(ShimCallback.safeParse({ ...base, result: null, error: null, extra: 1 }).success).toBe(false);
  });
});
