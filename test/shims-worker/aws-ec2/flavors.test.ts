/**
 * Protocol v1.2 in the EC2 shim Worker, against the fake EC2: the capabilities, the flavor
 * catalogue (DescribeInstanceTypes, paged, filtered by the pool's instance_types, kept a while),
 * and a shaped create (the job's disk and spot over the pool's extra specs).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { validateFlavorCatalogue } from "../../../src/providers/shim-protocol";
import { expectedEc2Flavors, FAKE_INSTANCE_TYPES } from "../../fake-ec2/instance-types";
import { bootstrap, launches, type ShimWorld, shimWorld } from "./harness";

let logs: string[] = [];
beforeEach(() => {
  logs = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void logs.push(String(line)));
});
afterEach(() => vi.restoreAllMocks());

const typeCalls = async (w: ShimWorld) => (await w.account.requests()).filter((r) => r.action === "DescribeInstanceTypes");
const requestLines = () => logs.map((l) => JSON.parse(l)).filter((l) => l.event === "shim_request" && l.operation === "flavors");

describe("capabilities and the catalogue", () => {
  it("capabilities: v1.2 with a flavor catalogue, synchronous, no batch create", async () => {
    const w = await shimWorld();
    const { status, body } = await w.call("GET", "/v1/capabilities");
    expect({ status, ...body }).toMatchObject({ status: 200, interface_version: "v1.2", flavors: true, async: false, provider: "aws-ec2" });
    expect(body.batch_create).toBeUndefined();
  });

  it("an unsigned or wrongly signed GET /v1/flavors is 401 before EC2 is called", async () => {
    const w = await shimWorld();
    const unsigned = await w.call("GET", "/v1/flavors", { headers: { "X-Edgerunner-Signature": undefined } });
    const wrong = await w.call("GET", "/v1/flavors", { secret: "another-secret-of-16-chars" });
    expect([unsigned.status, wrong.status]).toEqual([401, 401]);
    expect((await w.call("POST", "/v1/flavors")).status).toBe(405);
    expect(await w.account.requests()).toEqual([]);
  });

  it("lists every current-generation type a runner can use, following every page, as valid flavors", async () => {
    const w = await shimWorld();
    const res = await w.call("GET", "/v1/flavors");
    expect(res.status).toBe(200);
    const catalogue = validateFlavorCatalogue(res.body);
    expect(catalogue.ok && catalogue.value.currency).toBe("USD");
    const byName = new Map((res.body.flavors as { name: string }[]).map((f) => [f.name, f]));
    expect(byName.get("c7g.xlarge")).toEqual({
      name: "c7g.xlarge",
      vcpus: 4,
      memory_mib: 8192,
      architecture: "arm64",
      family: "c7g",
      gpu: null,
      disk_gb: null,
      price_per_hour: null,
      spot: true,
    });
    expect(byName.get("g5.xlarge")).toMatchObject({
      vcpus: 4,
      memory_mib: 16384,
      architecture: "amd64",
      gpu: { count: 1, model: "NVIDIA A10G" },
    });
    expect(byName.get("m7i-flex.xlarge")).toMatchObject({ family: "m7i-flex", vcpus: 4, memory_mib: 16384 });
    // i386 as well as x86_64: still amd64. A Mac (dedicated hosts) and a previous generation are left out.
    expect(byName.get("t2.micro")).toMatchObject({ architecture: "amd64", vcpus: 1, memory_mib: 1024 });
    expect([byName.has("mac1.metal"), byName.has("m3.medium")]).toEqual([false, false]);
    expect(res.body.flavors).toEqual(expectedEc2Flavors());

    // The fake answers five types a page: every page was asked for, each with the same filter.
    const calls = await typeCalls(w);
    const currentGeneration = FAKE_INSTANCE_TYPES.filter((t) => t.currentGeneration).length;
    expect(calls).toHaveLength(Math.ceil(currentGeneration / 5));
    expect(calls.map((c) => [c.params["Filter.1.Name"], c.params["Filter.1.Value.1"], c.params.MaxResults])).toEqual(
      calls.map(() => ["current-generation", "true", "100"]),
    );
    expect(calls.map((c) => c.params.NextToken !== undefined)).toEqual(calls.map((_, i) => i > 0));
  });

  it("a pool's instance_types are its catalogue, whatever their generation", async () => {
    const w = await shimWorld();
    const res = await w.call("GET", "/v1/flavors", { specs: { instance_types: ["m3.medium", "c7g.large", "g5.xlarge"] } });
    expect(res.status).toBe(200);
    expect(res.body.flavors.map((f: { name: string }) => f.name)).toEqual(["c7g.large", "g5.xlarge", "m3.medium"]);
    const [call] = await typeCalls(w);
    expect(call!.params).toMatchObject({
      "Filter.1.Name": "instance-type",
      "Filter.1.Value.1": "c7g.large",
      "Filter.1.Value.2": "g5.xlarge",
      "Filter.1.Value.3": "m3.medium",
    });
  });

  it("is kept for the next requests of the same account and filter: no second call to EC2", async () => {
    const w = await shimWorld();
    const first = await w.call("GET", "/v1/flavors");
    const calls = (await typeCalls(w)).length;
    const again = await w.call("GET", "/v1/flavors", { pool: "7d1e6a3b-0000-4000-8000-00000000beef" });
    expect(again).toMatchObject({ status: 200, body: first.body });
    expect(await typeCalls(w)).toHaveLength(calls);
    expect(requestLines().map((l) => [l.catalogue_cached, l.ec2_calls])).toEqual([
      [false, calls],
      [true, 0],
    ]);
    // Another filter is another catalogue.
    await w.call("GET", "/v1/flavors", { specs: { instance_types: ["t3.micro"] } });
    expect(await typeCalls(w)).toHaveLength(calls + 1);
  });

  it("a refused DescribeInstanceTypes is 403 naming the IAM action, and is not kept", async () => {
    const w = await shimWorld();
    await w.account.setFaults({ actions: [{ action: "DescribeInstanceTypes", code: "UnauthorizedOperation", status: 403, times: 1 }] });
    const refused = await w.call("GET", "/v1/flavors");
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/^cannot list flavors: .*it needs ec2:DescribeInstanceTypes/);
    expect((await w.call("GET", "/v1/flavors")).status).toBe(200);
  });

  it("extra specs the shim cannot read are 400, before EC2 is called", async () => {
    const w = await shimWorld();
    const res = await w.call("GET", "/v1/flavors", { specs: { instance_type: "c7g.large" } });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain("the EC2 shim calls it instance_types");
    expect(await w.account.requests()).toEqual([]);
  });
});

describe("a shaped create", () => {
  const runs = async (w: ShimWorld) => (await w.account.requests()).filter((r) => r.action === "RunInstances");

  it("the job's disk and spot win over the pool's: an 80 GB root volume, on spot only", async () => {
    const w = await shimWorld();
    const b = bootstrap({
      flavor: "c7a.xlarge",
      extra_specs: { capacity: "on-demand", root_volume_size_gb: 30, root_volume_type: "gp3" },
      shape: { disk_gb: 80, spot: true },
    });
    const res = await w.call("POST", "/v1/instances", { body: b });
    expect(res.status).toBe(201);
    const [i] = await w.account.instances();
    expect(i).toMatchObject({ instanceType: "c7a.xlarge", lifecycle: "spot" });
    expect(i!.blockDevice).toMatchObject({ "Ebs.VolumeSize": "80", "Ebs.VolumeType": "gp3" });
    expect((await runs(w))[0]!.params).toMatchObject({
      "InstanceMarketOptions.MarketType": "spot",
      "InstanceMarketOptions.SpotOptions.SpotInstanceType": "one-time",
      "BlockDeviceMapping.1.Ebs.VolumeSize": "80",
    });
  });

  it("spot: true is spot alone, and only the chosen type is tried: no on-demand, no other instance type", async () => {
    const w = await shimWorld();
    await w.account.setFaults({ launch: [{ code: "InsufficientInstanceCapacity", instance_type: "c7a.xlarge" }] });
    const b = bootstrap({
      flavor: "c7a.xlarge",
      extra_specs: { capacity: "spot-with-fallback", instance_types: ["t3.micro"] },
      shape: { disk_gb: null, spot: true },
    });
    const res = await w.call("POST", "/v1/instances", { body: b });
    expect(res.status).toBe(503);
    expect((await launches(w.account)).map((l) => [l.type, l.market])).toEqual([["c7a.xlarge", "spot"]]);
    // The root volume is left to the AMI: nothing asked for another size.
    expect((await runs(w))[0]!.params["BlockDeviceMapping.1.Ebs.VolumeSize"]).toBeUndefined();
  });

  it("spot: false leaves the pool's capacity as it is (spot first, then on-demand)", async () => {
    const w = await shimWorld();
    await w.account.setFaults({ launch: [{ code: "InsufficientInstanceCapacity", market: "spot" }] });
    const b = bootstrap({ flavor: "c7a.xlarge", extra_specs: { capacity: "spot-with-fallback" }, shape: { disk_gb: null, spot: false } });
    expect((await w.call("POST", "/v1/instances", { body: b })).status).toBe(201);
    expect((await launches(w.account)).map((l) => l.market)).toEqual(["spot", "on-demand"]);
  });

  it("a disk over the largest root volume the shim makes is 400, before EC2 is called", async () => {
    const w = await shimWorld();
    const res = await w.call("POST", "/v1/instances", { body: bootstrap({ shape: { disk_gb: 20_000, spot: false } }) });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain("shape.disk_gb 20000 is over the largest root volume the shim makes, 16384 GB");
    expect(await w.account.requests()).toEqual([]);
  });
});
