import { describe, expect, it } from "vitest";
import { providerCheck } from "../../../src/doctor/provider-checks";
import { err, ok, provider, refused } from "./fixtures";

describe("provider shims", () => {
  it("answers its capabilities and takes our signature: ok, with the time it took", () => {
    const c = providerCheck(provider({ capabilities: ok({ interfaceVersion: "v1.1", batchMax: 50 }, 42) }));
    expect(c).toMatchObject({ id: "provider.shim:prov", status: "ok", details: { duration_ms: 42, batch_create_max: 50 } });
    expect(c.summary).toContain("42 ms");
  });

  it("a wrong secret (401): the shim and the coordinator disagree on it", () => {
    const c = providerCheck(provider({ capabilities: refused(401, "bad signature") }));
    expect(c.status).toBe("fail");
    expect(c.fix).toContain("The shim and the coordinator disagree on the secret: edgerunner provider update aws --secret-from-file");
  });

  it("404: probably not the shim's base URL; no answer: is it running", () => {
    expect(providerCheck(provider({ capabilities: refused(404) })).fix).toMatch(/--shim-url .*with a new secret in the same command/);
    const down = providerCheck(provider({ capabilities: err({ kind: "unreachable", message: "connection failed: ECONNREFUSED" }) }));
    expect([down.status, down.summary]).toEqual(["fail", expect.stringContaining("ECONNREFUSED")]);
    expect(providerCheck(provider({ capabilities: err({ kind: "malformed", message: "expected {interface_version}" }) })).status).toBe(
      "fail",
    );
  });

  it("a slow answer warns", () => {
    expect(providerCheck(provider({ capabilities: ok({ interfaceVersion: "v1", batchMax: 0 }, 7000) })).status).toBe("warn");
  });
});
