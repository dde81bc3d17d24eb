import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { validateProviderInstance, validateProviderInstanceList } from "../../../src/providers/shim-protocol";
import { bootstrap, CONTROLLER, faultText, launches, OTHER_POOL, POOL, SECRET, type ShimWorld, shimWorld } from "./harness";

let w: ShimWorld;
beforeAll(async () => {
  w = await shimWorld({ images: { "ami-0aaaaaaaaaaaaaaa1": { root_device_name: "/dev/sda1" } } });
});
/** The Worker's log lines, kept instead of printed. */
let logs: string[] = [];
beforeEach(() => {
  logs = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void logs.push(String(line)));
});
afterEach(() => vi.restoreAllMocks());

const waitForState = async (id: string, state: string) => {
  for (let i = 0; i < 100; i++) {
    if ((await w.account.instances()).find((x) => x.instanceId === id)?.state === state) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${id} never reached ${state}`);
};

describe("signatures and headers", () => {
  it("an unsigned, stale or wrongly signed request is 401 before EC2 is called", async () => {
    await w.account.reset();
    const b = bootstrap();
    const unsigned = await w.call("POST", "/v1/instances", {
      body: b,
      headers: { "X-Edgerunner-Signature": undefined, "X-Edgerunner-Timestamp": undefined },
    });
    const wrong = await w.call("POST", "/v1/instances", { body: b, secret: "another-secret-of-16-chars" });
    const stale = await w.call("GET", "/v1/instances", {
      headers: { "X-Edgerunner-Timestamp": String(Math.floor(Date.now() / 1000) - 3600) },
    });
    expect([unsigned.status, wrong.status, stale.status]).toEqual([401, 401, 401]);
    expect(unsigned.body.details.reason).toBe("missing_timestamp");
    expect(wrong.body.details.reason).toBe("bad_signature");
    expect(await w.account.requests()).toEqual([]);
  });

  it("the previous secret still works while rotating", async () => {
    const res = await w.call("GET", "/v1/capabilities", {
      secret: "the-old-secret-0123456789",
      env: { SHIM_PREVIOUS_SECRETS: "the-old-secret-0123456789" },
    });
    expect(res.status).toBe(200);
  });

  it("missing pool headers are 400; another coordinator is 403 when CONTROLLER_ID is set; a misconfigured Worker says what is missing", async () => {
    expect((await w.call("GET", "/v1/instances", { headers: { "X-Edgerunner-Pool-Id": undefined } })).status).toBe(400);
    expect((await w.call("GET", "/v1/instances", { headers: { "X-Edgerunner-Pool-Extra-Specs": "not base64!" } })).status).toBe(400);
    expect((await w.call("GET", "/v1/instances", { env: { CONTROLLER_ID: "someone-else" } })).status).toBe(403);
    const broken = await w.call("GET", "/v1/instances", { env: { AWS_REGION: "", AWS_SECRET_ACCESS_KEY: "" } });
    expect(broken.status).toBe(500);
    expect(broken.body.error).toMatch(/AWS_SECRET_ACCESS_KEY must be set; AWS_REGION must be a region/);
  });
});

describe("create", () => {
  it("launches one tagged instance whose user data fetches the install script with the instance token", async () => {
    await w.account.reset();
    const b = bootstrap({
      extra_specs: { tags: { team: "ci" }, subnet_ids: ["subnet-0123456789abcdef0"], security_group_ids: ["sg-0123456789abcdef0"] },
    });
    const res = await w.call("POST", "/v1/instances", { body: b });
    expect(res.status).toBe(201);
    const v = validateProviderInstance(res.body);
    expect(v.ok).toBe(true);
    expect(res.body).toMatchObject({ name: b.name, status: "running", os_type: "linux", os_arch: "amd64" });
    expect(res.body.provider_fault).toBeUndefined();
    const [i] = await w.account.instances();
    expect(i).toMatchObject({
      instanceId: res.body.provider_id,
      instanceType: "c5.large",
      subnetId: "subnet-0123456789abcdef0",
      securityGroupIds: ["sg-0123456789abcdef0"],
    });
    expect(i!.tags).toEqual({ Name: b.name, "edgerunner:controller-id": CONTROLLER, "edgerunner:pool-id": POOL, team: "ci" });
    expect(i!.clientToken).toMatch(/^[0-9a-f]{64}$/);
    const userData = new TextDecoder().decode(Uint8Array.from(atob(i!.userData!), (c) => c.charCodeAt(0)));
    expect(userData).toMatch(/^#cloud-config\n/);
    expect(userData).toContain(`METADATA_URL='${b["metadata-url"]}'`);
    expect(userData).toContain(`INSTANCE_TOKEN='${b["instance-token"]}'`);
  });

  it("a retried create answers the machine already made (200), found by name, without launching again", async () => {
    await w.account.reset();
    const b = bootstrap();
    const first = await w.call("POST", "/v1/instances", { body: b });
    const again = await w.call("POST", "/v1/instances", { body: { ...b, "instance-token": "a-fresh-token" } });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body.provider_id).toBe(first.body.provider_id);
    expect(await launches(w.account)).toHaveLength(1);
    expect(await w.account.instances()).toHaveLength(1);
  });

  it("a retried create that does not find the machine by name (EC2 not consistent yet) still gets it, through the client token", async () => {
    await w.account.reset();
    const b = bootstrap();
    const first = await w.call("POST", "/v1/instances", { body: b });
    // As if DescribeInstances did not show the new instance's tags yet.
    await w.account.patchInstance(first.body.provider_id, { tags: { "edgerunner:controller-id": CONTROLLER, "edgerunner:pool-id": POOL } });
    const again = await w.call("POST", "/v1/instances", { body: { ...b, "instance-token": "a-fresh-token" } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ provider_id: first.body.provider_id, name: b.name });
    expect((await launches(w.account)).map((l) => l.error)).toEqual([null, "IdempotentParameterMismatch"]);
    expect(await w.account.instances()).toHaveLength(1);
  });

  it("a name another pool launched is 409, and that machine is left alone", async () => {
    await w.account.reset();
    const b = bootstrap();
    const mine = await w.call("POST", "/v1/instances", { body: b });
    const theirs = await w.call("POST", "/v1/instances", { body: { ...b, pool_id: OTHER_POOL }, pool: OTHER_POOL });
    expect(theirs.status).toBe(409);
    expect(theirs.body.error).toContain(mine.body.provider_id);
    const instances = await w.account.instances();
    expect(instances.map((i) => i.instanceId)).toEqual([mine.body.provider_id]);
    expect(["pending", "running"]).toContain(instances[0]!.state);
  });

  it("root volume settings map the AMI's own root device", async () => {
    await w.account.reset();
    const res = await w.call("POST", "/v1/instances", {
      body: bootstrap({ image: "ami-0aaaaaaaaaaaaaaa1", extra_specs: { root_volume_size_gb: 80, root_volume_type: "gp3" } }),
    });
    expect(res.status).toBe(201);
    expect((await w.account.instances())[0]!.blockDevice).toEqual({
      DeviceName: "/dev/sda1",
      "Ebs.DeleteOnTermination": "true",
      "Ebs.VolumeSize": "80",
      "Ebs.VolumeType": "gp3",
    });
    expect((await w.account.requests()).map((r) => r.action)).toEqual(["DescribeInstances", "DescribeImages", "RunInstances"]);
  });

  it("Windows machines get EC2Launch PowerShell user data", async () => {
    await w.account.reset();
    const res = await w.call("POST", "/v1/instances", { body: bootstrap({ os_type: "windows" }) });
    expect(res.status).toBe(201);
    const text = atob((await w.account.instances())[0]!.userData!);
    expect(text).toMatch(/^<powershell>\n/);
    expect(text).toContain("<persist>false</persist>");
  });
});

it("logs one line per request and per failed EC2 call, never the instance token or a secret", async () => {
  await w.account.reset();
  await w.account.setFaults({ launch: [{ code: "InsufficientInstanceCapacity", instance_type: "c5.large", times: 1 }] });
  const b = bootstrap({ extra_specs: { instance_types: ["m5.large"] } });
  expect((await w.call("POST", "/v1/instances", { body: b })).status).toBe(201);
  const lines = logs.map((l) => JSON.parse(l));
  expect(lines).toEqual([
    expect.objectContaining({
      event: "ec2_call_failed",
      scale_set: POOL,
      action: "RunInstances",
      code: "InsufficientInstanceCapacity",
      status: 500,
    }),
    expect.objectContaining({ event: "shim_request", method: "POST", operation: "create", scale_set: POOL, status: 201, ec2_calls: 3 }),
  ]);
  for (const secret of [b["instance-token"], SECRET, w.account.secret_access_key]) expect(logs.join("\n")).not.toContain(secret);
});

describe("capacity fallback", () => {
  const specs = {
    instance_types: ["m5.large"],
    subnet_ids: ["subnet-0aaaaaaaaaaaaaaa1", "subnet-0bbbbbbbbbbbbbbb2"],
    capacity: "spot-with-fallback",
  };

  it("tries the next type and subnet, then on-demand, and says on the instance what was tried", async () => {
    await w.account.reset();
    await w.account.setFaults({
      launch: [
        { code: "InsufficientInstanceCapacity", instance_type: "c5.large" },
        { code: "SpotMaxPriceTooLow", instance_type: "m5.large", market: "spot" },
      ],
    });
    const res = await w.call("POST", "/v1/instances", { body: bootstrap({ extra_specs: specs }) });
    expect(res.status).toBe(201);
    expect(await launches(w.account)).toMatchObject([
      { type: "c5.large", subnet: "subnet-0aaaaaaaaaaaaaaa1", market: "spot", error: "InsufficientInstanceCapacity" },
      { type: "c5.large", subnet: "subnet-0bbbbbbbbbbbbbbb2", market: "spot", error: "InsufficientInstanceCapacity" },
      { type: "m5.large", subnet: "subnet-0aaaaaaaaaaaaaaa1", market: "spot", error: "SpotMaxPriceTooLow" },
      { type: "m5.large", subnet: "subnet-0bbbbbbbbbbbbbbb2", market: "spot", error: "SpotMaxPriceTooLow" },
      { type: "c5.large", subnet: "subnet-0aaaaaaaaaaaaaaa1", market: "on-demand", error: "InsufficientInstanceCapacity" },
      { type: "c5.large", subnet: "subnet-0bbbbbbbbbbbbbbb2", market: "on-demand", error: "InsufficientInstanceCapacity" },
      { type: "m5.large", subnet: "subnet-0aaaaaaaaaaaaaaa1", market: "on-demand", error: null },
    ]);
    const [i] = (await w.account.instances()).filter((x) => x.state !== "terminated");
    expect(i).toMatchObject({ instanceType: "m5.large", subnetId: "subnet-0aaaaaaaaaaaaaaa1" });
    expect(i!.lifecycle).toBeUndefined();
    expect(faultText(res.body)).toBe(
      "launched as m5.large on-demand in subnet-0aaaaaaaaaaaaaaa1 after: c5.large spot in subnet-0aaaaaaaaaaaaaaa1: InsufficientInstanceCapacity; " +
        "c5.large spot in subnet-0bbbbbbbbbbbbbbb2: InsufficientInstanceCapacity; m5.large spot in subnet-0aaaaaaaaaaaaaaa1: SpotMaxPriceTooLow; " +
        "m5.large spot in subnet-0bbbbbbbbbbbbbbb2: SpotMaxPriceTooLow; c5.large on-demand in subnet-0aaaaaaaaaaaaaaa1: InsufficientInstanceCapacity; " +
        "c5.large on-demand in subnet-0bbbbbbbbbbbbbbb2: InsufficientInstanceCapacity",
    );
  });

  it("a full subnet is skipped from then on, and the account's spot limit skips every spot attempt", async () => {
    await w.account.reset();
    await w.account.setFaults({
      launch: [
        { code: "MaxSpotInstanceCountExceeded", market: "spot" },
        { code: "InsufficientFreeAddressesInSubnet", subnet_id: "subnet-0aaaaaaaaaaaaaaa1" },
      ],
    });
    const res = await w.call("POST", "/v1/instances", { body: bootstrap({ extra_specs: specs }) });
    expect(res.status).toBe(201);
    expect(await launches(w.account)).toMatchObject([
      { type: "c5.large", subnet: "subnet-0aaaaaaaaaaaaaaa1", market: "spot", error: "MaxSpotInstanceCountExceeded" },
      { type: "c5.large", subnet: "subnet-0aaaaaaaaaaaaaaa1", market: "on-demand", error: "InsufficientFreeAddressesInSubnet" },
      { type: "c5.large", subnet: "subnet-0bbbbbbbbbbbbbbb2", market: "on-demand", error: null },
    ]);
  });

  it("no capacity anywhere: 503 (the coordinator retries later) listing every attempt, nothing left running", async () => {
    await w.account.reset();
    await w.account.setFaults({ launch: [{ code: "InsufficientInstanceCapacity" }] });
    const res = await w.call("POST", "/v1/instances", { body: bootstrap({ extra_specs: { ...specs, capacity: "spot" } }) });
    expect(res.status).toBe(503);
    expect(res.body.error).toMatch(
      /^no EC2 capacity for edgerunner-ec2-\S+: tried c5\.large spot in subnet-0aaaaaaaaaaaaaaa1: InsufficientInstanceCapacity; .*m5\.large spot in subnet-0bbbbbbbbbbbbbbb2: InsufficientInstanceCapacity$/,
    );
    expect(await launches(w.account)).toHaveLength(4);
    expect(await w.account.instances()).toEqual([]);
  });

  it("gives up when the create deadline passes, saying how many attempts were left", async () => {
    await w.account.reset();
    await w.account.setFaults({ launch: [{ code: "InsufficientInstanceCapacity" }], latency_ms: { RunInstances: 300 } });
    const res = await w.call("POST", "/v1/instances", { body: bootstrap({ extra_specs: specs }), env: { CREATE_DEADLINE_SECONDS: "0.5" } });
    expect(res.status).toBe(503);
    expect(res.body.error).toMatch(/\(6 more not tried: out of time or attempts\)$/);
    expect(await launches(w.account)).toHaveLength(2);
  });
});

describe("EC2 errors", () => {
  it("throttling is 503 (retryable) with Retry-After", async () => {
    await w.account.reset();
    await w.account.setFaults({ actions: [{ action: "RunInstances", code: "RequestLimitExceeded", times: 1 }] });
    const res = await w.call("POST", "/v1/instances", { body: bootstrap() });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(res.body.error).toMatch(/throttling.*RequestLimitExceeded/);
  });

  it("a missing permission is 403 naming the IAM action; bad credentials are 403 naming the secrets", async () => {
    await w.account.reset();
    await w.account.setFaults({
      actions: [
        {
          action: "RunInstances",
          code: "UnauthorizedOperation",
          status: 403,
          message: "You are not authorized to perform this operation. Encoded authorization failure message: abc",
        },
      ],
    });
    const denied = await w.call("POST", "/v1/instances", { body: bootstrap() });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatch(
      /may not call RunInstances \(UnauthorizedOperation: You are not authorized.*\); it needs ec2:RunInstances and ec2:CreateTags/,
    );
    const creds = await w.call("GET", "/v1/instances", { env: { AWS_SECRET_ACCESS_KEY: "wrong" } });
    expect(creds.status).toBe(403);
    expect(creds.body.error).toMatch(
      /refused the shim's AWS credentials on DescribeInstances \(AuthFailure: .*\); check the Worker's AWS_ACCESS_KEY_ID/,
    );
  });

  it("EC2 refusing the launch (an AMI that does not exist) is 422, permanent", async () => {
    await w.account.reset();
    await w.account.configure({ missing_images: ["ami-0ffffffffffffffff"] });
    const res = await w.call("POST", "/v1/instances", { body: bootstrap({ image: "ami-0ffffffffffffffff" }) });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/EC2 refused RunInstances \(InvalidAMIID.NotFound/);
    await w.account.configure({ missing_images: [] });
  });

  it("EC2 unreachable is 502 (retryable)", async () => {
    const res = await w.call("GET", "/v1/instances", { env: { EC2_ENDPOINT: "http://127.0.0.1:1" } });
    expect(res.status).toBe(502);
  });
});

describe("bad requests change nothing", () => {
  it("unknown or bad extra_specs are 400 with what to fix, before any EC2 call", async () => {
    await w.account.reset();
    const res = await w.call("POST", "/v1/instances", {
      body: bootstrap({
        extra_specs: {
          subnet_id: "subnet-0123456789abcdef0",
          security_group_ids: ["default"],
          capacity: "cheap",
          colour: "red",
          tags: { "aws:x": "1" },
        },
      }),
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual(
      expect.arrayContaining([
        "extra_specs.subnet_id: unknown key; the EC2 shim calls it subnet_ids",
        expect.stringMatching(/^extra_specs\.colour: unknown key \(known keys: subnet_ids, /),
        "extra_specs.security_group_ids.0: must be a security group id such as sg-0123456789abcdef0",
        expect.stringMatching(/^extra_specs\.capacity: /),
        "extra_specs.tags.aws:x: tag keys starting with aws: are reserved by AWS",
      ]),
    );
    expect(await w.account.requests()).toEqual([]);
  });

  it("bodies that are not JSON or not a BootstrapInstance, a pool mismatch or a non-AMI image are 400", async () => {
    await w.account.reset();
    const answers = await Promise.all([
      w.call("POST", "/v1/instances", { raw: "{not json" }),
      w.call("POST", "/v1/instances", { body: { name: "x" } }),
      w.call("POST", "/v1/instances", { body: bootstrap({ pool_id: OTHER_POOL }) }),
      w.call("POST", "/v1/instances", { body: bootstrap({ image: "ubuntu:24.04" }) }),
      w.call("POST", "/v1/instances", { body: bootstrap({ os_type: "unknown" }) }),
      w.call("POST", "/v1/instances", { body: bootstrap({ "instance-token": "line\nbreak" }) }),
      w.call("POST", "/v1/instances", { body: bootstrap({ flavor: "small" }) }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400, 400, 400, 400]);
    expect(answers[6]!.body.error).toMatch(/flavor must be an EC2 instance type such as c6i.large, not "small"/);
    expect(answers[3]!.body.error).toMatch(/image must be an AMI id/);
    expect(answers[5]!.body.error).toMatch(/instance-token contains control characters/);
    expect(await w.account.requests()).toEqual([]);
  });
});

describe("get, list, delete, start, stop", () => {
  it("get by id and by name; list pages through DescribeInstances; untagged and other pools' instances are never seen", async () => {
    await w.account.reset();
    await w.account.configure({ page_size: 2 });
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await w.call("POST", "/v1/instances", { body: bootstrap() })).body);
    const untagged = await w.account.seedInstance({ tags: { Name: made[0].name } });
    const foreign = await w.account.seedInstance({
      tags: { Name: "x", "edgerunner:pool-id": POOL, "edgerunner:controller-id": "another-coordinator" },
    });
    const list = await w.call("GET", "/v1/instances");
    expect(list.status).toBe(200);
    expect(validateProviderInstanceList(list.body).ok).toBe(true);
    expect(list.body.map((p: any) => p.provider_id).sort()).toEqual(made.map((m) => m.provider_id).sort());
    expect(
      (await w.account.requests()).filter((r) => r.action === "DescribeInstances" && r.params.MaxResults).length,
    ).toBeGreaterThanOrEqual(3);

    const byId = await w.call("GET", `/v1/instances/${made[0].provider_id}`);
    const byName = await w.call("GET", `/v1/instances/${encodeURIComponent(made[0].name)}`);
    expect(byId.body).toEqual(byName.body);
    expect(byId.body).toMatchObject({ provider_id: made[0].provider_id, name: made[0].name });
    for (const other of [untagged, foreign]) {
      expect((await w.call("GET", `/v1/instances/${other.instanceId}`)).status).toBe(404);
      expect((await w.call("DELETE", `/v1/instances/${other.instanceId}`)).status).toBe(404);
      expect((await w.call("POST", `/v1/instances/${other.instanceId}/stop`)).status).toBe(404);
    }
    expect((await w.call("GET", `/v1/instances`, { pool: OTHER_POOL })).body).toEqual([]);

    expect((await w.call("DELETE", "/v1/instances")).status).toBe(204);
    const after = await w.account.instances();
    expect(
      after
        .filter((i) => i.state === "shutting-down" || i.state === "terminated")
        .map((i) => i.instanceId)
        .sort(),
    ).toEqual(made.map((m) => m.provider_id).sort());
    expect(after.find((i) => i.instanceId === untagged.instanceId)!.state).toBe("running");
    expect(after.find((i) => i.instanceId === foreign.instanceId)!.state).toBe("running");
    expect((await w.call("GET", "/v1/instances")).body).toEqual([]);
    await w.account.configure({ page_size: 1000 });
  });

  it("delete terminates (by id or by name) and is 404 once gone; unknown ids are 404 everywhere", async () => {
    await w.account.reset();
    const a = (await w.call("POST", "/v1/instances", { body: bootstrap() })).body;
    const b = (await w.call("POST", "/v1/instances", { body: bootstrap() })).body;
    expect((await w.call("DELETE", `/v1/instances/${a.provider_id}`)).status).toBe(204);
    expect((await w.call("DELETE", `/v1/instances/${encodeURIComponent(b.name)}`)).status).toBe(204);
    expect((await w.call("GET", `/v1/instances/${a.provider_id}`)).status).toBe(404);
    expect((await w.call("DELETE", `/v1/instances/${a.provider_id}`)).status).toBe(404);
    for (const i of await w.account.instances()) expect(["shutting-down", "terminated"]).toContain(i.state);
    for (const [method, path] of [
      ["GET", "/v1/instances/i-0123456789abcdef0"],
      ["GET", "/v1/instances/no-such-name"],
      ["DELETE", "/v1/instances/no%2Fsuch%2Fname"],
      ["POST", "/v1/instances/i-0123456789abcdef0/start"],
      ["POST", "/v1/instances/no-such-name/stop"],
    ] as const) {
      expect((await w.call(method, path)).status, `${method} ${path}`).toBe(404);
    }
  });

  it("stop and start", async () => {
    await w.account.reset();
    const m = (await w.call("POST", "/v1/instances", { body: bootstrap() })).body;
    await waitForState(m.provider_id, "running");
    expect((await w.call("POST", `/v1/instances/${m.provider_id}/stop`)).status).toBe(204);
    expect((await w.call("GET", `/v1/instances/${m.provider_id}`)).body.status).toBe("stopped");
    await waitForState(m.provider_id, "stopped");
    expect((await w.call("POST", `/v1/instances/${m.provider_id}/start`)).status).toBe(204);
    expect((await w.call("GET", `/v1/instances/${m.provider_id}`)).body.status).toBe("running");
  });

  it("starting an instance that is still stopping is 503 (try later)", async () => {
    await w.account.reset();
    await w.account.configure({ stop_delay_ms: 5000 });
    const m = (await w.call("POST", "/v1/instances", { body: bootstrap() })).body;
    await waitForState(m.provider_id, "running");
    await w.call("POST", `/v1/instances/${m.provider_id}/stop`);
    const res = await w.call("POST", `/v1/instances/${m.provider_id}/start`);
    expect(res.status).toBe(503);
    expect(res.body.error).toMatch(/IncorrectInstanceState/);
    await w.account.configure({ stop_delay_ms: 20 });
  });
});
