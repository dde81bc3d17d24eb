import { describe, expect, it } from "vitest";
import { shimCallsByProvider } from "../../src/db/dashboard-queries";

describe("shimCallsByProvider", () => {
  it("sums calls and errors over operations, per provider, ignoring other shim counters", () => {
    const counters = [
      { name: "shim.calls|create|aws", value: 5 },
      { name: "shim.calls|delete|aws", value: 2 },
      { name: "shim.errors|create|aws", value: 1 },
      { name: "shim.calls|list|gcp", value: 7 },
      { name: "shim.other|list|gcp", value: 100 },
    ];
    expect(Object.fromEntries(shimCallsByProvider(counters))).toEqual({ aws: { calls: 7, errors: 1 }, gcp: { calls: 7, errors: 0 } });
  });
  it("is empty without counters", () => {
    expect(shimCallsByProvider([]).size).toBe(0);
  });
});
