import { describe, expect, it } from "vitest";
import { parseExtraSpecs } from "../../../shims/hetzner/extra-specs.ts";

describe("the Hetzner shim's extra_specs", () => {
  it("takes every setting, with public IPv4 and IPv6 on by default", () => {
    const r = parseExtraSpecs({
      locations: ["fsn1"],
      server_types: ["cpx21"],
      placement_group: 1,
      firewalls: [2],
      networks: [3],
      ssh_keys: ["ops", "42"],
      enable_ipv6: false,
      labels: { team: "ci", "example.com/cost": "a.b_c-d", empty: "" },
    });
    expect(r).toEqual({
      ok: true,
      specs: expect.objectContaining({ enable_ipv4: true, enable_ipv6: false, placement_group: 1, labels: expect.any(Object) }),
    });
    expect(parseExtraSpecs(null)).toEqual({ ok: true, specs: { enable_ipv4: true, enable_ipv6: true } });
  });

  it("refuses unknown keys (pointing at ours for other tools' names) and labels Hetzner would refuse", () => {
    const r = parseExtraSpecs({
      location: "fsn1",
      colour: "red",
      labels: { "edgerunner-pool-id": "x", "hetzner.cloud/x": "y", ok: "-bad", ["x".repeat(64)]: "v" },
    });
    expect(r.ok).toBe(false);
    const problems = r.ok ? [] : r.problems;
    expect(problems).toContain("extra_specs.location: unknown key; the Hetzner shim calls it locations");
    expect(problems.some((p) => p.startsWith("extra_specs.colour: unknown key (known keys: locations, server_types"))).toBe(true);
    expect(problems).toContain("extra_specs.labels.edgerunner-pool-id: edgerunner-* labels are set by the shim");
    expect(problems).toContain("extra_specs.labels.hetzner.cloud/x: the hetzner.cloud/ prefix is reserved by Hetzner");
    expect(problems.some((p) => p.startsWith("extra_specs.labels.ok: label values are at most 63"))).toBe(true);
    expect(problems.some((p) => p.startsWith(`extra_specs.labels.${"x".repeat(64)}: label names are 1-63`))).toBe(true);
    expect(parseExtraSpecs([])).toEqual({ ok: false, problems: ["extra_specs must be a JSON object"] });
  });
});
