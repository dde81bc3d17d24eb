/**
 * DescribeInstanceTypes (the EC2 shim's flavor catalogue) against AWS's own client, as
 * ec2-sdk.test.ts does for the other calls: the SDK's request is accepted and the fake's XML
 * parses into the SDK's InstanceTypeInfo with the table's values; the shim's client sends
 * exactly the SDK's parameters for the same call and reads the same values back.
 */
import {
  DescribeInstanceTypesCommand,
  type DescribeInstanceTypesCommandInput,
  EC2Client,
  type EC2ServiceException,
  type InstanceTypeInfo,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEc2Api, type Ec2Api } from "../../shims/aws-ec2/ec2-api.ts";
import { describeInstanceTypesParams } from "../../shims/aws-ec2/ec2-params.ts";
import { parseDescribeInstanceTypes } from "../../shims/aws-ec2/ec2-xml.ts";
import { createAccount, type FakeEc2Account } from "../fake-ec2/control.ts";
import { FAKE_INSTANCE_TYPES } from "../fake-ec2/instance-types.ts";
import { type FakeEc2, startFakeEc2 } from "../fake-ec2/server.ts";

let fake: FakeEc2;
let account: FakeEc2Account;
let sdk: EC2Client;
let shim: Ec2Api;

beforeAll(async () => {
  fake = await startFakeEc2();
  account = await createAccount(fake.url);
  sdk = new EC2Client({
    region: account.region,
    endpoint: fake.url,
    credentials: { accessKeyId: account.access_key_id, secretAccessKey: account.secret_access_key },
    maxAttempts: 1,
  });
  shim = createEc2Api({
    endpoint: fake.url,
    region: account.region,
    accessKeyId: account.access_key_id,
    secretAccessKey: account.secret_access_key,
    timeoutMs: 5000,
  });
});
afterAll(async () => {
  sdk?.destroy();
  await fake?.stop();
});

async function lastTwo() {
  const [a, b] = (await account.requests()).slice(-2);
  return { sdk: a!, shim: b! };
}

/** What the shim reads of an item, as the SDK read it. */
const asShimReads = (t: InstanceTypeInfo) => ({
  instanceType: t.InstanceType,
  currentGeneration: t.CurrentGeneration,
  vcpus: t.VCpuInfo?.DefaultVCpus,
  memoryMib: t.MemoryInfo?.SizeInMiB,
  architectures: t.ProcessorInfo?.SupportedArchitectures ?? [],
  usageClasses: t.SupportedUsageClasses ?? [],
  gpus: (t.GpuInfo?.Gpus ?? []).map((g) => ({ name: g.Name, manufacturer: g.Manufacturer, count: g.Count })),
});

describe("DescribeInstanceTypes", () => {
  it("filtered and paged: the SDK follows NextToken, the shim sends the same parameters and reads the same types", async () => {
    const filters = [{ name: "current-generation", values: ["true"] }];
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await sdk.send(
        new DescribeInstanceTypesCommand({
          Filters: [{ Name: "current-generation", Values: ["true"] }],
          MaxResults: 100,
          NextToken: token,
        }),
      );
      const mine = await shim.call("DescribeInstanceTypes", describeInstanceTypesParams({ filters, maxResults: 100, nextToken: token }));
      expect(mine.ok).toBe(true);
      const parsed = parseDescribeInstanceTypes((mine as { doc: any }).doc);
      expect(parsed.types).toEqual(page.InstanceTypes!.map(asShimReads));
      expect(parsed.nextToken).toBe(page.NextToken ?? null);
      const { sdk: sent, shim: mineSent } = await lastTwo();
      expect(mineSent.params).toEqual(sent.params);
      seen.push(...page.InstanceTypes!.map((t) => t.InstanceType!));
      token = page.NextToken;
      pages++;
    } while (token);
    expect(pages).toBeGreaterThan(1);
    expect(seen.sort()).toEqual(
      FAKE_INSTANCE_TYPES.filter((t) => t.currentGeneration)
        .map((t) => t.instanceType)
        .sort(),
    );
  });

  it("every field the table holds reaches the SDK: sizes, architectures, usage classes, GPUs, instance storage", async () => {
    const out = await sdk.send(new DescribeInstanceTypesCommand({ InstanceTypes: ["g5.xlarge", "c7g.large", "t2.micro"] }));
    const byName = new Map(out.InstanceTypes!.map((t) => [t.InstanceType, t]));
    expect(byName.get("g5.xlarge")).toMatchObject({
      CurrentGeneration: true,
      SupportedUsageClasses: ["on-demand", "spot"],
      ProcessorInfo: { SupportedArchitectures: ["x86_64"], Manufacturer: "AMD" },
      VCpuInfo: { DefaultVCpus: 4, DefaultCores: 2, DefaultThreadsPerCore: 2 },
      MemoryInfo: { SizeInMiB: 16384 },
      InstanceStorageSupported: true,
      InstanceStorageInfo: { TotalSizeInGB: 250, Disks: [{ SizeInGB: 250, Count: 1, Type: "ssd" }], NvmeSupport: "required" },
      GpuInfo: { Gpus: [{ Name: "A10G", Manufacturer: "NVIDIA", Count: 1, MemoryInfo: { SizeInMiB: 24576 } }], TotalGpuMemoryInMiB: 24576 },
      Hypervisor: "nitro",
      BurstablePerformanceSupported: false,
    });
    expect(byName.get("c7g.large")).toMatchObject({
      ProcessorInfo: { SupportedArchitectures: ["arm64"] },
      MemoryInfo: { SizeInMiB: 4096 },
    });
    expect(byName.get("t2.micro")).toMatchObject({ ProcessorInfo: { SupportedArchitectures: ["i386", "x86_64"] }, FreeTierEligible: true });
  });

  it("refuses what EC2 refuses: an unknown type, an unknown filter, MaxResults out of 5 to 100", async () => {
    const refused = async (input: DescribeInstanceTypesCommandInput) =>
      ((await sdk.send(new DescribeInstanceTypesCommand(input)).catch((e) => e)) as EC2ServiceException).name;
    expect(await refused({ InstanceTypes: ["c7g.huge" as never] })).toBe("InvalidInstanceType");
    expect(await refused({ Filters: [{ Name: "colour", Values: ["red"] }] })).toBe("InvalidParameterValue");
    expect(await refused({ MaxResults: 101 })).toBe("InvalidParameterValue");
    expect(await refused({ MaxResults: 4 })).toBe("InvalidParameterValue");
    const mine = await shim.call("DescribeInstanceTypes", describeInstanceTypesParams({ filters: [], maxResults: 101 }));
    expect(mine).toMatchObject({ ok: false, error: { code: "InvalidParameterValue", status: 400 } });
  });
});
