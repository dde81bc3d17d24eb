import { describe, expect, it } from "vitest";
import { describeFailures, isCapacityError, launchPlan, ruledOut } from "../../../shims/aws-ec2/launch-plan";

const short = (plan: ReturnType<typeof launchPlan>) => plan.map((a) => `${a.market}:${a.instanceType}@${a.subnetId ?? "default"}`);

describe("launch plan", () => {
  it("on-demand: the flavor first, then the other types, each in every subnet", () => {
    expect(
      short(
        launchPlan("c6i.large", {
          capacity: "on-demand",
          instance_types: ["m6i.large", "c6i.large"],
          subnet_ids: ["subnet-a", "subnet-b"],
        }),
      ),
    ).toEqual([
      "on-demand:c6i.large@subnet-a",
      "on-demand:c6i.large@subnet-b",
      "on-demand:m6i.large@subnet-a",
      "on-demand:m6i.large@subnet-b",
    ]);
  });

  it("spot-with-fallback: every spot attempt, then every on-demand one; spot alone never falls back", () => {
    expect(short(launchPlan("t3.micro", { capacity: "spot-with-fallback" }))).toEqual([
      "spot:t3.micro@default",
      "on-demand:t3.micro@default",
    ]);
    expect(short(launchPlan("t3.micro", { capacity: "spot", instance_types: ["t3a.micro"] }))).toEqual([
      "spot:t3.micro@default",
      "spot:t3a.micro@default",
    ]);
  });

  it("an empty flavor leaves the types list alone", () => {
    expect(short(launchPlan("", { capacity: "on-demand", instance_types: ["m5.large"] }))).toEqual(["on-demand:m5.large@default"]);
  });

  it("a full subnet rules out its later attempts; the account's spot limit every later spot attempt; capacity in one zone nothing else", () => {
    const a = (instanceType: string, subnetId: string | null, market: "spot" | "on-demand") => ({ instanceType, subnetId, market });
    const full = [{ attempt: a("c5.large", "subnet-a", "spot"), code: "InsufficientFreeAddressesInSubnet" }];
    expect(ruledOut(a("m5.large", "subnet-a", "on-demand"), full)).toBe(true);
    expect(ruledOut(a("m5.large", "subnet-b", "on-demand"), full)).toBe(false);
    const spotLimit = [{ attempt: a("c5.large", null, "spot"), code: "MaxSpotInstanceCountExceeded" }];
    expect(ruledOut(a("m5.large", "subnet-b", "spot"), spotLimit)).toBe(true);
    expect(ruledOut(a("m5.large", "subnet-b", "on-demand"), spotLimit)).toBe(false);
    const noCapacity = [{ attempt: a("c5.large", "subnet-a", "spot"), code: "InsufficientInstanceCapacity" }];
    expect(ruledOut(a("c5.large", "subnet-a", "on-demand"), noCapacity)).toBe(false);
    expect(describeFailures([...full, ...noCapacity])).toBe(
      "c5.large spot in subnet-a: InsufficientFreeAddressesInSubnet; c5.large spot in subnet-a: InsufficientInstanceCapacity",
    );
  });

  it("capacity errors move on; anything else would fail every attempt alike", () => {
    for (const code of [
      "InsufficientInstanceCapacity",
      "InsufficientFreeAddressesInSubnet",
      "SpotMaxPriceTooLow",
      "MaxSpotInstanceCountExceeded",
      "Unsupported",
    ])
      expect(isCapacityError(code)).toBe(true);
    for (const code of ["RequestLimitExceeded", "UnauthorizedOperation", "InvalidAMIID.NotFound", "InvalidParameterValue"])
      expect(isCapacityError(code)).toBe(false);
  });
});
