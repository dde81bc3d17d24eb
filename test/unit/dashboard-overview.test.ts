import { describe, expect, it } from "vitest";
import { shimCallsByProvider, withPools } from "../../src/db/dashboard/overview-queries";

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

describe("withPools", () => {
  it("gives each entity its pool's credential ids in the order the rows come, and none to an entity without rows", () => {
    const e = (id: string) => ({
      id,
      kind: "organization" as const,
      entity: id,
      endpoint_name: "github.com",
      forge: "github" as const,
      credentials_id: "own",
      app_webhook_id: null,
    });
    const pools = [
      { entity_id: "a", credential_id: "c2" },
      { entity_id: "b", credential_id: "c1" },
      { entity_id: "a", credential_id: "c1" },
    ];
    expect(withPools([e("a"), e("b"), e("c")], pools).map((x) => [x.id, x.pool])).toEqual([
      ["a", ["c2", "c1"]],
      ["b", ["c1"]],
      ["c", []],
    ]);
  });
});
