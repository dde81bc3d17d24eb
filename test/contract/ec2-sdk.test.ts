/**
 * The fake EC2 against AWS's own client (@aws-sdk/client-ec2), and the EC2 shim's requests
 * against the SDK's. For every call the shim makes:
 *  - the SDK's request is accepted (its SigV4 verifies under the fake's AWS-style check) and the
 *    fake's XML answer parses into the SDK's shapes with the expected values;
 *  - the same call made through the shim's client (shims/aws-ec2/ec2-api.ts, params from
 *    ec2-params.ts) sends exactly the parameters the SDK sent, and reads the same values back.
 */
import {
  DescribeImagesCommand,
  DescribeInstancesCommand,
  EC2Client,
  type EC2ServiceException,
  RunInstancesCommand,
  type RunInstancesCommandInput,
  StartInstancesCommand,
  StopInstancesCommand,
  TerminateInstancesCommand,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEc2Api, type Ec2Api } from "../../shims/aws-ec2/ec2-api.ts";
import {
  describeImagesParams,
  describeInstancesParams,
  instanceIdsParams,
  type RunInstanceInput,
  runInstancesParams,
} from "../../shims/aws-ec2/ec2-params.ts";
import { parseDescribeImages, parseDescribeInstances, parseRunInstances, parseStateChanges } from "../../shims/aws-ec2/ec2-xml.ts";
import { createAccount, type FakeEc2Account } from "../fake-ec2/control.ts";
import { type FakeEc2, startFakeEc2 } from "../fake-ec2/server.ts";

let fake: FakeEc2;
let account: FakeEc2Account;
let sdk: EC2Client;
let shim: Ec2Api;

const sdkFor = (
  a: { access_key_id: string; secret_access_key: string; session_token?: string; region: string },
  over: { secret?: string; token?: string } = {},
) =>
  new EC2Client({
    region: a.region,
    endpoint: fake.url,
    credentials: {
      accessKeyId: a.access_key_id,
      secretAccessKey: over.secret ?? a.secret_access_key,
      sessionToken: over.token ?? a.session_token,
    },
    maxAttempts: 1,
  });
const shimFor = (a: { access_key_id: string; secret_access_key: string; session_token?: string; region: string }) =>
  createEc2Api({
    endpoint: fake.url,
    region: a.region,
    accessKeyId: a.access_key_id,
    secretAccessKey: a.secret_access_key,
    sessionToken: a.session_token,
    timeoutMs: 5000,
  });

beforeAll(async () => {
  fake = await startFakeEc2();
  account = await createAccount(fake.url, {
    config: {
      boot_delay_ms: 50,
      stop_delay_ms: 50,
      images: { "ami-0aaaaaaaaaaaaaaa1": { root_device_name: "/dev/sda1", architecture: "arm64" } },
    },
  });
  sdk = sdkFor(account);
  shim = shimFor(account);
});
afterAll(async () => {
  sdk?.destroy();
  await fake?.stop();
});

/** The parameters of the last two recorded calls: the SDK's, then the shim's. */
async function lastTwo() {
  const reqs = await account.requests();
  const [a, b] = reqs.slice(-2);
  return { sdk: a!, shim: b! };
}

const TAGS = [
  { key: "Name", value: "edgerunner-contract-1" },
  { key: "edgerunner:controller-id", value: "ctrl-1" },
  { key: "edgerunner:pool-id", value: "pool-1" },
  { key: "team", value: "ci & tools" },
];
const sdkTags = TAGS.map((t) => ({ Key: t.key, Value: t.value }));

const launches: { name: string; shim: RunInstanceInput; sdk: RunInstancesCommandInput }[] = [
  {
    name: "on-demand in a subnet, security groups, key, profile ARN, root volume",
    shim: {
      imageId: "ami-0aaaaaaaaaaaaaaa1",
      instanceType: "c6g.large",
      subnetId: "subnet-0123456789abcdef0",
      securityGroupIds: ["sg-0123456789abcdef0", "sg-00000001"],
      clientToken: "a".repeat(64),
      userData: Buffer.from("#cloud-config\n").toString("base64"),
      tags: TAGS,
      market: "on-demand",
      keyName: "ci key",
      iamInstanceProfile: { arn: "arn:aws:iam::123456789012:instance-profile/runners" },
      rootVolume: { deviceName: "/dev/sda1", sizeGb: 60, type: "gp3", iops: 4000, throughput: 250 },
    },
    sdk: {
      ImageId: "ami-0aaaaaaaaaaaaaaa1",
      InstanceType: "c6g.large",
      MinCount: 1,
      MaxCount: 1,
      ClientToken: "a".repeat(64),
      UserData: Buffer.from("#cloud-config\n").toString("base64"),
      SubnetId: "subnet-0123456789abcdef0",
      SecurityGroupIds: ["sg-0123456789abcdef0", "sg-00000001"],
      KeyName: "ci key",
      IamInstanceProfile: { Arn: "arn:aws:iam::123456789012:instance-profile/runners" },
      BlockDeviceMappings: [
        { DeviceName: "/dev/sda1", Ebs: { DeleteOnTermination: true, VolumeSize: 60, VolumeType: "gp3", Iops: 4000, Throughput: 250 } },
      ],
      TagSpecifications: [
        { ResourceType: "instance", Tags: sdkTags },
        { ResourceType: "volume", Tags: sdkTags },
      ],
    },
  },
  {
    name: "spot with a max price, a launch template by name, a profile name, default subnet",
    shim: {
      imageId: "ami-0123456789abcdef0",
      instanceType: "m5.large",
      subnetId: null,
      securityGroupIds: [],
      clientToken: "b".repeat(64),
      userData: Buffer.from("<powershell></powershell>").toString("base64"),
      tags: TAGS.slice(0, 3),
      market: "spot",
      spotMaxPrice: "0.05",
      iamInstanceProfile: { name: "runners" },
      launchTemplate: { name: "ci-runners", version: "$Latest" },
    },
    sdk: {
      ImageId: "ami-0123456789abcdef0",
      InstanceType: "m5.large",
      MinCount: 1,
      MaxCount: 1,
      ClientToken: "b".repeat(64),
      UserData: Buffer.from("<powershell></powershell>").toString("base64"),
      IamInstanceProfile: { Name: "runners" },
      LaunchTemplate: { LaunchTemplateName: "ci-runners", Version: "$Latest" },
      InstanceMarketOptions: {
        MarketType: "spot",
        SpotOptions: { SpotInstanceType: "one-time", InstanceInterruptionBehavior: "terminate", MaxPrice: "0.05" },
      },
      TagSpecifications: [
        { ResourceType: "instance", Tags: sdkTags.slice(0, 3) },
        { ResourceType: "volume", Tags: sdkTags.slice(0, 3) },
      ],
    },
  },
];

describe("RunInstances", () => {
  for (const l of launches) {
    it(`${l.name}: the SDK's call parses, and the shim sends the same parameters`, async () => {
      const out = await sdk.send(new RunInstancesCommand(l.sdk));
      const i = out.Instances![0]!;
      expect(i.InstanceId).toMatch(/^i-[0-9a-f]{17}$/);
      expect(i.State).toEqual({ Code: 0, Name: "pending" });
      expect(i.ClientToken).toBe(l.sdk.ClientToken);
      expect(i.InstanceType).toBe(l.sdk.InstanceType);
      expect(i.Tags).toEqual(l.sdk.TagSpecifications![0]!.Tags);
      expect(i.InstanceLifecycle).toBe(l.shim.market === "spot" ? "spot" : undefined);
      expect(i.Placement?.AvailabilityZone).toMatch(/^us-east-1[abc]$/);
      expect(i.PrivateIpAddress).toMatch(/^10\.0\./);

      // The same launch through the shim's client: the same client token and parameters, so EC2 answers with the same instance.
      const again = await shim.call("RunInstances", runInstancesParams(l.shim));
      expect(again.ok).toBe(true);
      const mine = parseRunInstances((again as { doc: any }).doc)[0]!;
      expect(mine).toMatchObject({
        instanceId: i.InstanceId,
        // EC2 answers a retried launch with the instance as it is now: it may have booted meanwhile.
        state: expect.stringMatching(/^(pending|running)$/),
        instanceType: i.InstanceType,
        subnetId: i.SubnetId,
        availabilityZone: i.Placement!.AvailabilityZone,
        privateIp: i.PrivateIpAddress,
        clientToken: i.ClientToken,
        architecture: i.Architecture,
        tags: Object.fromEntries(i.Tags!.map((t) => [t.Key, t.Value])),
      });
      const { sdk: sent, shim: mineSent } = await lastTwo();
      expect(sent.action).toBe("RunInstances");
      expect(mineSent.params).toEqual(sent.params);
      expect(mineSent.status).toBe(200);
    });
  }

  it("a reused client token with other parameters: IdempotentParameterMismatch, for the SDK and the shim alike", async () => {
    const err = (await sdk
      .send(new RunInstancesCommand({ ...launches[0]!.sdk, InstanceType: "c6g.xlarge" }))
      .catch((e) => e)) as EC2ServiceException;
    expect(err.name).toBe("IdempotentParameterMismatch");
    expect(err.$metadata.httpStatusCode).toBe(400);
    const mine = await shim.call("RunInstances", runInstancesParams({ ...launches[0]!.shim, instanceType: "c6g.xlarge" }));
    expect(mine).toMatchObject({ ok: false, error: { code: "IdempotentParameterMismatch", status: 400, message: err.message } });
  });

  it("capacity errors reach the SDK as EC2's named exceptions, and the shim reads the same code and message", async () => {
    await account.setFaults({ launch: [{ code: "InsufficientInstanceCapacity", instance_type: "c5.large", times: 2 }] });
    const input: RunInstancesCommandInput = { ...launches[0]!.sdk, InstanceType: "c5.large", ClientToken: "c".repeat(64) };
    const err = (await sdk.send(new RunInstancesCommand(input)).catch((e) => e)) as EC2ServiceException;
    expect(err.name).toBe("InsufficientInstanceCapacity");
    expect(err.$metadata.httpStatusCode).toBe(500);
    expect(err.message).toMatch(/sufficient c5\.large capacity/);
    const mine = await shim.call(
      "RunInstances",
      runInstancesParams({ ...launches[0]!.shim, instanceType: "c5.large", clientToken: "c".repeat(64) }),
    );
    expect(mine).toMatchObject({ ok: false, error: { code: "InsufficientInstanceCapacity", status: 500, message: err.message } });
    const { sdk: sent, shim: mineSent } = await lastTwo();
    expect(mineSent.params).toEqual(sent.params);
  });

  it("throttling is RequestLimitExceeded (503), for the SDK and the shim", async () => {
    await account.setFaults({ actions: [{ action: "DescribeInstances", code: "RequestLimitExceeded", times: 2 }] });
    const err = (await sdk.send(new DescribeInstancesCommand({})).catch((e) => e)) as EC2ServiceException;
    expect(err.name).toBe("RequestLimitExceeded");
    expect(err.$metadata.httpStatusCode).toBe(503);
    expect(await shim.call("DescribeInstances", {})).toMatchObject({ ok: false, error: { code: "RequestLimitExceeded", status: 503 } });
  });
});

describe("DescribeInstances", () => {
  it("filters and pages: the SDK follows NextToken, the shim sends the same parameters and reads the same pages", async () => {
    await account.reset();
    for (let n = 0; n < 7; n++)
      await account.seedInstance({ tags: { "edgerunner:pool-id": "pool-p", Name: `m-${n}` }, state: n === 6 ? "terminated" : "running" });
    await account.seedInstance({ tags: { "edgerunner:pool-id": "pool-q", Name: "other" } });
    const filters = [
      { name: "tag:edgerunner:pool-id", values: ["pool-p"] },
      { name: "instance-state-name", values: ["pending", "running", "stopping", "stopped"] },
    ];
    const sdkFilters = filters.map((f) => ({ Name: f.name, Values: f.values }));
    const seen: { sdk: string[]; shim: string[] } = { sdk: [], shim: [] };
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await sdk.send(new DescribeInstancesCommand({ Filters: sdkFilters, MaxResults: 5, NextToken: token }));
      const mine = await shim.call("DescribeInstances", describeInstancesParams({ filters, maxResults: 5, nextToken: token }));
      const parsed = parseDescribeInstances((mine as { doc: any }).doc);
      const ids = page.Reservations!.flatMap((r) => r.Instances!.map((i) => i.InstanceId!));
      expect(parsed.instances.map((i) => i.instanceId)).toEqual(ids);
      expect(parsed.nextToken).toBe(page.NextToken ?? null);
      expect(parsed.instances.map((i) => i.tags.Name)).toEqual(
        page.Reservations!.flatMap((r) => r.Instances!.map((i) => i.Tags!.find((t) => t.Key === "Name")!.Value)),
      );
      const { sdk: sent, shim: mineSent } = await lastTwo();
      expect(mineSent.params).toEqual(sent.params);
      seen.sdk.push(...ids);
      token = page.NextToken;
      pages++;
    } while (token);
    expect(pages).toBe(2);
    expect(seen.sdk).toHaveLength(6);
  });

  it("by instance id, and an unknown id is InvalidInstanceID.NotFound", async () => {
    const [one] = await account.instances();
    const page = await sdk.send(
      new DescribeInstancesCommand({ InstanceIds: [one!.instanceId], Filters: [{ Name: "instance-state-name", Values: ["running"] }] }),
    );
    expect(page.Reservations![0]!.Instances![0]!.InstanceId).toBe(one!.instanceId);
    await shim.call(
      "DescribeInstances",
      describeInstancesParams({ instanceIds: [one!.instanceId], filters: [{ name: "instance-state-name", values: ["running"] }] }),
    );
    const { sdk: sent, shim: mineSent } = await lastTwo();
    expect(mineSent.params).toEqual(sent.params);

    const err = (await sdk
      .send(new DescribeInstancesCommand({ InstanceIds: ["i-0123456789abcdef0"] }))
      .catch((e) => e)) as EC2ServiceException;
    expect(err.name).toBe("InvalidInstanceID.NotFound");
    expect(
      await shim.call("DescribeInstances", describeInstancesParams({ instanceIds: ["i-0123456789abcdef0"], filters: [] })),
    ).toMatchObject({
      ok: false,
      error: { code: "InvalidInstanceID.NotFound", status: 400, message: err.message },
    });
  });
});

describe("DescribeImages", () => {
  it("the root device name, for the SDK and the shim", async () => {
    const out = await sdk.send(new DescribeImagesCommand({ ImageIds: ["ami-0aaaaaaaaaaaaaaa1"] }));
    expect(out.Images![0]).toMatchObject({ ImageId: "ami-0aaaaaaaaaaaaaaa1", RootDeviceName: "/dev/sda1", Architecture: "arm64" });
    const mine = await shim.call("DescribeImages", describeImagesParams(["ami-0aaaaaaaaaaaaaaa1"]));
    expect(parseDescribeImages((mine as { doc: any }).doc)).toEqual([
      { imageId: "ami-0aaaaaaaaaaaaaaa1", rootDeviceName: "/dev/sda1", architecture: "arm64" },
    ]);
    const { sdk: sent, shim: mineSent } = await lastTwo();
    expect(mineSent.params).toEqual(sent.params);
  });
});

describe("StopInstances, StartInstances, TerminateInstances", () => {
  it("state changes parse the same for the SDK and the shim, with the same parameters", async () => {
    const launched = await sdk.send(
      new RunInstancesCommand({ ImageId: "ami-0123456789abcdef0", InstanceType: "t3.micro", MinCount: 1, MaxCount: 1 }),
    );
    const id = launched.Instances![0]!.InstanceId!;
    await waitForState(id, "running");
    const commands = [
      ["StopInstances", new StopInstancesCommand({ InstanceIds: [id] }), (o: any) => o.StoppingInstances, "stopped"],
      ["StartInstances", new StartInstancesCommand({ InstanceIds: [id] }), (o: any) => o.StartingInstances, "running"],
      ["TerminateInstances", new TerminateInstancesCommand({ InstanceIds: [id] }), (o: any) => o.TerminatingInstances, "terminated"],
    ] as const;
    // Each transition lasts until the test ends it (the account's 50 ms would end it between the
    // two calls on a busy machine): both calls meet the instance in the same transition.
    await account.configure({ boot_delay_ms: 3_600_000, stop_delay_ms: 3_600_000 });
    try {
      for (const [action, command, pick, settled] of commands) {
        const out = await sdk.send(command as any);
        const change = pick(out)[0];
        expect(change.InstanceId).toBe(id);
        // The shim's call repeats the SDK's on the instance now in transition: EC2 answers with its current state.
        const mine = await shim.call(action, instanceIdsParams([id]));
        expect(mine.ok).toBe(true);
        expect(parseStateChanges((mine as { doc: any }).doc, action)[0]).toMatchObject({
          instanceId: id,
          currentState: change.CurrentState.Name,
        });
        const { sdk: sent, shim: mineSent } = await lastTwo();
        expect(mineSent.params).toEqual(sent.params);
        // The transition ends as EC2's would, in the state the next command starts from.
        await account.patchInstance(id, { state: settled });
      }
    } finally {
      await account.configure({ boot_delay_ms: 50, stop_delay_ms: 50 });
    }
  });
});

async function waitForState(id: string, state: string) {
  for (let i = 0; i < 100; i++) {
    if ((await account.instances()).find((x) => x.instanceId === id)?.state === state) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${id} never reached ${state}`);
}

describe("SigV4, as AWS checks it", () => {
  it("a wrong secret key and a wrong session token are AuthFailure (401) for the SDK", async () => {
    const wrong = sdkFor(account, { secret: "not-the-secret" });
    const err = (await wrong.send(new DescribeInstancesCommand({})).catch((e) => e)) as EC2ServiceException;
    wrong.destroy();
    expect(err.name).toBe("AuthFailure");
    expect(err.$metadata.httpStatusCode).toBe(401);

    const temp = await createAccount(fake.url, { session_token: "session-token-1" });
    const good = sdkFor(temp);
    await expect(good.send(new DescribeInstancesCommand({}))).resolves.toBeDefined();
    expect(await shimFor(temp).call("DescribeInstances", {})).toMatchObject({ ok: true });
    const bad = sdkFor(temp, { token: "session-token-2" });
    expect(((await bad.send(new DescribeInstancesCommand({})).catch((e) => e)) as Error).name).toBe("AuthFailure");
    good.destroy();
    bad.destroy();
  });

  it("a request signed for another region is refused", async () => {
    const elsewhere = new EC2Client({
      region: "eu-west-1",
      endpoint: fake.url,
      credentials: { accessKeyId: account.access_key_id, secretAccessKey: account.secret_access_key },
      maxAttempts: 1,
    });
    const err = (await elsewhere.send(new DescribeInstancesCommand({})).catch((e) => e)) as EC2ServiceException;
    elsewhere.destroy();
    expect(err.name).toBe("AuthFailure");
  });
});
