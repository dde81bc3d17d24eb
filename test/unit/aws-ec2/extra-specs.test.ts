import { describe, expect, it } from "vitest";
import { parseExtraSpecs } from "../../../shims/aws-ec2/extra-specs";

describe("EC2 extra_specs", () => {
  it("none means on-demand with EC2's defaults", () => {
    expect(parseExtraSpecs(undefined)).toEqual({ ok: true, specs: { capacity: "on-demand" } });
    expect(parseExtraSpecs(null)).toEqual({ ok: true, specs: { capacity: "on-demand" } });
    expect(parseExtraSpecs({})).toEqual({ ok: true, specs: { capacity: "on-demand" } });
  });

  it("takes every documented key", () => {
    const specs = {
      subnet_ids: ["subnet-0123456789abcdef0", "subnet-01234567"],
      security_group_ids: ["sg-0123456789abcdef0"],
      instance_types: ["c6i.large", "m6i.large", "c7gd.16xlarge", "u-6tb1.metal"],
      capacity: "spot-with-fallback",
      spot_max_price: "0.25",
      root_volume_size_gb: 100,
      root_volume_type: "io2",
      root_volume_iops: 5000,
      iam_instance_profile: "arn:aws:iam::123456789012:instance-profile/ci/runners",
      key_name: "ops",
      launch_template: { name: "ci-runners", version: "$Default" },
      tags: { team: "platform", "cost-center": "42" },
    };
    expect(parseExtraSpecs(specs)).toEqual({ ok: true, specs });
    expect(parseExtraSpecs({ iam_instance_profile: "runners", launch_template: { id: "lt-0123456789abcdef0", version: "3" } }).ok).toBe(
      true,
    );
  });

  it("refuses what would launch something else than asked, naming the key", () => {
    const problems = (raw: unknown) => {
      const r = parseExtraSpecs(raw);
      return r.ok ? [] : r.problems;
    };
    expect(problems([])).toEqual(["extra_specs must be a JSON object"]);
    expect(problems({ ssh_key_name: "x", volume_size: 40 })).toEqual([
      "extra_specs.ssh_key_name: unknown key; the EC2 shim calls it key_name",
      "extra_specs.volume_size: unknown key; the EC2 shim calls it root_volume_size_gb",
    ]);
    expect(problems({ spot_max_price: "0.1" })).toEqual(['extra_specs.spot_max_price: only with capacity "spot" or "spot-with-fallback"']);
    expect(problems({ root_volume_type: "io1" })).toEqual(["extra_specs.root_volume_iops: required with root_volume_type io1"]);
    expect(problems({ root_volume_type: "gp2", root_volume_throughput: 200 })).toEqual([
      "extra_specs.root_volume_throughput: only with root_volume_type gp3",
    ]);
    expect(problems({ launch_template: { id: "lt-0123456789abcdef0", name: "both" } })).toEqual([
      "extra_specs.launch_template: give exactly one of id and name",
    ]);
    expect(problems({ subnet_ids: [] })).toHaveLength(1);
    expect(problems({ instance_types: ["large"] })).toEqual(["extra_specs.instance_types.0: must be an instance type such as c6i.large"]);
    expect(problems({ root_volume_size_gb: 10.5 })).toHaveLength(1);
    expect(problems({ tags: { Name: "mine", "Edgerunner:pool-id": "p", ok: "x".repeat(257) } })).toEqual([
      "extra_specs.tags.ok: tag values are at most 256 characters",
      "extra_specs.tags.Name: Name and edgerunner:* tags are set by the shim",
      "extra_specs.tags.Edgerunner:pool-id: Name and edgerunner:* tags are set by the shim",
    ]);
  });
});
