/**
 * A fake Amazon EC2 for tests and local end-to-end runs: a Node HTTP server on 127.0.0.1 that
 * speaks the EC2 Query API (form-encoded POST or GET, SigV4-signed, XML answers) for the calls
 * a runner shim makes: RunInstances, DescribeInstances, DescribeImages, DescribeInstanceTypes
 * (./describe-instance-types.ts), TerminateInstances, StartInstances, StopInstances. Requests
 * are verified the way AWS verifies them (./sigv4.ts); AWS's own SDK drives it in
 * test/contract/ec2-sdk.test.ts and ec2-sdk-instance-types.test.ts.
 *
 * One server hosts many accounts, each its own EC2 (instances, client tokens, faults), picked
 * by the access key that signed the request — so parallel test files never see each other.
 * Instances go pending → running → (stopping → stopped | shutting-down → terminated) on timers;
 * terminated ones stay visible to DescribeInstances, as in EC2.
 *
 * Control API (unsigned; loopback only), JSON in and out:
 *   POST   /_control/accounts                    {region?, session_token?, config?} → Ec2Account
 *   GET    /_control/accounts/{a}/instances      every instance, terminated ones too
 *   POST   /_control/accounts/{a}/instances      seed one {tags?, state?, instanceType?, subnetId?, …}: an instance the shim did not make
 *   PATCH  /_control/accounts/{a}/instances/{i}  change an instance's fields
 *   GET    /_control/accounts/{a}/requests       EC2 calls received, oldest first
 *   PUT    /_control/accounts/{a}/faults         Ec2Faults (replaces)
 *   PATCH  /_control/accounts/{a}/config         Ec2AccountConfig (merges)
 *   POST   /_control/accounts/{a}/reset          forget instances, tokens, requests and faults
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { describeInstanceTypes } from "./describe-instance-types.ts";
import { glob } from "./filter-glob.ts";
import { verifySigV4 } from "./sigv4.ts";
import type { ActionFault, Ec2Account, Ec2AccountConfig, Ec2Faults, FakeInstance, RecordedEc2Request } from "./types.ts";
import { document, el, errorDocument, instanceItem, set, state, type Xml } from "./xml.ts";

export type * from "./types.ts";

/** Told when an instance boots (its user data runs on the first boot only) and when it goes down. */
export interface FakeEc2Hooks {
  booted?(account: string, instance: FakeInstance, firstBoot: boolean): void;
  stopped?(account: string, instance: FakeInstance): void;
}

export interface FakeEc2 {
  url: string;
  /** An account made at start, for single-user runs (npm run fake-ec2). */
  account: Ec2Account;
  stop(): Promise<void>;
}

interface Account extends Ec2Account {
  instances: Map<string, FakeInstance>;
  /** ClientToken → the launch it made and a digest of its parameters. */
  tokens: Map<string, { params: string; instanceId: string }>;
  requests: RecordedEc2Request[];
  faults: Required<Ec2Faults>;
  config: Required<Ec2AccountConfig>;
  booted: Set<string>;
  nextIp: number;
}

class Ec2Failure extends Error {
  status: number;
  code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const fail = (status: number, code: string, message: string) => new Ec2Failure(status, code, message);

const DEFAULT_CONFIG: Required<Ec2AccountConfig> = {
  page_size: 1000,
  // Small, so every catalogue a test asks for takes several pages.
  instance_types_page_size: 5,
  boot_delay_ms: 100,
  stop_delay_ms: 100,
  missing_images: [],
  images: {},
};

/** EC2's HTTP status for the launch errors tests inject (capacity is a server error, the rest client errors). */
const LAUNCH_ERROR_STATUS: Record<string, number> = {
  InsufficientInstanceCapacity: 500,
  InsufficientCapacity: 500,
  InsufficientHostCapacity: 500,
};

const LIVE = new Set(["pending", "running", "stopping", "stopped"]);
const ID = (prefix: string) => new RegExp(`^${prefix}-(?:[0-9a-f]{8}|[0-9a-f]{17})$`);
const DEFAULT_SUBNET = "subnet-0000000000000000d";

const hex = (n: number) =>
  randomBytes(Math.ceil(n / 2))
    .toString("hex")
    .slice(0, n);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** `Prefix.1`, `Prefix.2`, … in order. */
function listParam(p: Record<string, string>, prefix: string): string[] {
  const out: string[] = [];
  for (let i = 1; p[`${prefix}.${i}`] !== undefined; i++) out.push(p[`${prefix}.${i}`]!);
  return out;
}

/** The sub-parameters under `Prefix.` as a record (`Prefix.Ebs.VolumeSize` → `Ebs.VolumeSize`). */
function struct(p: Record<string, string>, prefix: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(p)) if (k.startsWith(`${prefix}.`)) out[k.slice(prefix.length + 1)] = v;
  return Object.keys(out).length ? out : undefined;
}

function filters(p: Record<string, string>): { name: string; values: string[] }[] {
  const out = [];
  for (let i = 1; p[`Filter.${i}.Name`] !== undefined; i++)
    out.push({ name: p[`Filter.${i}.Name`]!, values: listParam(p, `Filter.${i}.Value`) });
  return out;
}

function matches(i: FakeInstance, f: { name: string; values: string[] }): boolean {
  const any = (v: string | undefined) => v !== undefined && f.values.some((x) => glob(x).test(v));
  if (f.name.startsWith("tag:")) return any(i.tags[f.name.slice(4)]);
  switch (f.name) {
    case "tag-key":
      return Object.keys(i.tags).some((k) => any(k));
    case "instance-state-name":
      return any(i.state);
    case "instance-id":
      return any(i.instanceId);
    case "client-token":
      return any(i.clientToken);
    case "subnet-id":
      return any(i.subnetId);
    case "instance-type":
      return any(i.instanceType);
    case "instance-lifecycle":
      return any(i.lifecycle ?? "");
    default:
      throw fail(400, "InvalidParameterValue", `The filter '${f.name}' is invalid`);
  }
}

const reservation = (i: FakeInstance, owner: string): Xml[] => [
  el("reservationId", `r-${createHash("sha256").update(i.instanceId).digest("hex").slice(0, 17)}`),
  el("ownerId", owner),
  set("groupSet", []),
  set("instancesSet", [instanceItem(i)]),
];

export async function startFakeEc2(opts: { port?: number; hooks?: FakeEc2Hooks; region?: string } = {}): Promise<FakeEc2> {
  const accounts = new Map<string, Account>();
  const byKey = new Map<string, Account>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const sockets = new Set<Socket>();
  const owner = "123456789012";

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  function newAccount(body: { region?: string; session_token?: string; config?: Ec2AccountConfig } = {}): Account {
    const a: Account = {
      id: hex(8),
      access_key_id: `AKIAFAKE${hex(12).toUpperCase()}`,
      secret_access_key: randomBytes(30).toString("base64"),
      region: body.region ?? opts.region ?? "us-east-1",
      ...(body.session_token ? { session_token: body.session_token } : {}),
      instances: new Map(),
      tokens: new Map(),
      requests: [],
      faults: { launch: [], actions: [], latency_ms: {} },
      config: { ...DEFAULT_CONFIG, ...body.config },
      booted: new Set(),
      nextIp: 10,
    };
    accounts.set(a.id, a);
    byKey.set(a.access_key_id, a);
    return a;
  }
  const publicAccount = (a: Account): Ec2Account => ({
    id: a.id,
    access_key_id: a.access_key_id,
    secret_access_key: a.secret_access_key,
    region: a.region,
    ...(a.session_token ? { session_token: a.session_token } : {}),
  });

  const azOf = (a: Account, subnetId: string) => a.region + "abc"[createHash("sha256").update(subnetId).digest()[0]! % 3];

  function boot(a: Account, i: FakeInstance) {
    later(a.config.boot_delay_ms, () => {
      if (i.state !== "pending") return;
      i.state = "running";
      const first = !a.booted.has(i.instanceId);
      a.booted.add(i.instanceId);
      opts.hooks?.booted?.(a.id, i, first);
    });
  }

  function halt(a: Account, i: FakeInstance, via: "shutting-down" | "stopping") {
    const wasUp = i.state === "running" || i.state === "pending";
    i.state = via;
    if (wasUp) opts.hooks?.stopped?.(a.id, i);
    later(a.config.stop_delay_ms, () => {
      if (i.state === via) i.state = via === "shutting-down" ? "terminated" : "stopped";
    });
  }

  function image(a: Account, imageId: string) {
    if (!ID("ami").test(imageId)) throw fail(400, "InvalidAMIID.Malformed", `Invalid id: "${imageId}" (expecting "ami-...")`);
    if (a.config.missing_images.includes(imageId)) throw fail(400, "InvalidAMIID.NotFound", `The image id '[${imageId}]' does not exist`);
    const over = a.config.images[imageId] ?? {};
    return { architecture: over.architecture ?? "x86_64", platform: over.platform, rootDeviceName: over.root_device_name ?? "/dev/xvda" };
  }

  function takeFault<T extends { times?: number; probability?: number }>(list: T[], match: (f: T) => boolean): T | undefined {
    const i = list.findIndex(
      (f) => match(f) && (f.times === undefined || f.times > 0) && (f.probability === undefined || Math.random() < f.probability),
    );
    if (i < 0) return undefined;
    const f = list[i]!;
    if (f.times !== undefined && --f.times <= 0) list.splice(i, 1);
    return f;
  }

  function runInstances(a: Account, p: Record<string, string>): Xml[] {
    const token = p.ClientToken;
    if (token !== undefined && (token.length > 64 || /[^\x20-\x7e]/.test(token)))
      throw fail(400, "InvalidParameterValue", "ClientToken must be at most 64 ASCII characters");
    const digest = createHash("sha256")
      .update(
        JSON.stringify(
          Object.entries(p)
            .filter(([k]) => k !== "ClientToken")
            .sort(),
        ),
      )
      .digest("hex");
    if (token) {
      const seen = a.tokens.get(token);
      if (seen && seen.params !== digest)
        throw fail(
          400,
          "IdempotentParameterMismatch",
          "Arguments on this idempotent request are inconsistent with arguments used in previous request(s).",
        );
      if (seen) {
        return reservation(a.instances.get(seen.instanceId)!, owner);
      }
    }
    if (p.ImageId === undefined) throw fail(400, "MissingParameter", "The request must contain the parameter ImageId");
    if (p.MinCount !== "1" || p.MaxCount !== "1")
      throw fail(400, "InvalidParameterValue", "This fake EC2 launches one instance per call (MinCount = MaxCount = 1)");
    const img = image(a, p.ImageId);
    const launchTemplate = struct(p, "LaunchTemplate");
    if (launchTemplate?.LaunchTemplateId !== undefined && !/^lt-[0-9a-f]{17}$/.test(launchTemplate.LaunchTemplateId)) {
      throw fail(
        400,
        "InvalidLaunchTemplateId.Malformed",
        `The specified launch template ID ${launchTemplate.LaunchTemplateId} is not valid`,
      );
    }
    const instanceType = p.InstanceType ?? (launchTemplate ? "t3.micro" : "m1.small");
    if (!/^[a-z0-9][a-z0-9-]*\.[a-z0-9-]+$/.test(instanceType))
      throw fail(400, "InvalidParameterValue", `Invalid value '${instanceType}' for InstanceType.`);
    const subnetId = p.SubnetId ?? DEFAULT_SUBNET;
    if (!ID("subnet").test(subnetId)) throw fail(400, "InvalidSubnetID.NotFound", `The subnet ID '${subnetId}' does not exist`);
    const groups = listParam(p, "SecurityGroupId");
    for (const g of groups) if (!ID("sg").test(g)) throw fail(400, "InvalidGroupId.Malformed", `Invalid id: "${g}" (expecting "sg-...")`);
    const userData = p.UserData;
    if (userData !== undefined && Buffer.from(userData, "base64").length > 16 * 1024)
      throw fail(400, "InvalidParameterValue", "User data is limited to 16384 bytes");
    const market = struct(p, "InstanceMarketOptions");
    const spot = market?.MarketType === "spot";
    if (market?.MarketType !== undefined && market.MarketType !== "spot" && market.MarketType !== "capacity-block") {
      throw fail(400, "InvalidParameterValue", `Invalid value '${market.MarketType}' for MarketType`);
    }
    if (
      spot &&
      market?.["SpotOptions.SpotInstanceType"] === "one-time" &&
      (market["SpotOptions.InstanceInterruptionBehavior"] ?? "terminate") !== "terminate"
    ) {
      throw fail(400, "InvalidParameterCombination", "One-time Spot Instances must use terminate as the interruption behavior");
    }
    const tags: Record<string, string> = {};
    for (let n = 1; p[`TagSpecification.${n}.ResourceType`] !== undefined; n++) {
      const type = p[`TagSpecification.${n}.ResourceType`]!;
      if (!["instance", "volume", "network-interface", "spot-instances-request"].includes(type))
        throw fail(400, "InvalidParameterValue", `'${type}' is not a valid taggable resource type for this operation.`);
      for (let t = 1; p[`TagSpecification.${n}.Tag.${t}.Key`] !== undefined; t++) {
        const key = p[`TagSpecification.${n}.Tag.${t}.Key`]!;
        if (key.toLowerCase().startsWith("aws:"))
          throw fail(400, "InvalidParameterValue", "Tag keys starting with 'aws:' are reserved for internal use");
        if (t > 50) throw fail(400, "TagLimitExceeded", "The maximum number of Tags for a resource has been reached.");
        if (type === "instance") tags[key] = p[`TagSpecification.${n}.Tag.${t}.Value`] ?? "";
      }
    }
    const fault = takeFault(
      a.faults.launch,
      (f) =>
        (f.instance_type === undefined || f.instance_type === instanceType) &&
        (f.subnet_id === undefined || f.subnet_id === subnetId) &&
        (f.market === undefined || f.market === (spot ? "spot" : "on-demand")),
    );
    if (fault) {
      const message =
        fault.message ??
        (fault.code === "InsufficientInstanceCapacity"
          ? `We currently do not have sufficient ${instanceType} capacity in the Availability Zone you requested (${azOf(a, subnetId)}). Our system will be working on provisioning additional capacity.`
          : `${fault.code} for ${instanceType} in ${subnetId}`);
      throw fail(LAUNCH_ERROR_STATUS[fault.code] ?? 400, fault.code, message);
    }

    const n = a.nextIp++;
    const i: FakeInstance = {
      instanceId: `i-${hex(17)}`,
      imageId: p.ImageId,
      instanceType,
      state: "pending",
      subnetId,
      vpcId: "vpc-0fa4e0000000000a1",
      availabilityZone: azOf(a, subnetId),
      privateIp: `10.0.${(n >> 8) & 255}.${n & 255}`,
      ...(token ? { clientToken: token } : {}),
      tags,
      launchTime: new Date().toISOString().replace(/\.\d{3}Z$/, ".000Z"),
      ...(img.platform ? { platform: img.platform } : {}),
      architecture: img.architecture,
      ...(spot ? { lifecycle: "spot", spotOptions: market } : {}),
      ...(userData !== undefined ? { userData } : {}),
      ...(p.KeyName ? { keyName: p.KeyName } : {}),
      ...(p["IamInstanceProfile.Arn"] || p["IamInstanceProfile.Name"]
        ? { iamInstanceProfile: p["IamInstanceProfile.Arn"] ?? `arn:aws:iam::${owner}:instance-profile/${p["IamInstanceProfile.Name"]}` }
        : {}),
      securityGroupIds: groups,
      ...(launchTemplate ? { launchTemplate } : {}),
      ...(struct(p, "BlockDeviceMapping.1") ? { blockDevice: struct(p, "BlockDeviceMapping.1") } : {}),
    };
    a.instances.set(i.instanceId, i);
    if (token) a.tokens.set(token, { params: digest, instanceId: i.instanceId });
    boot(a, i);
    return reservation(i, owner);
  }

  /** The instances named by InstanceId.N: every one must exist, or the whole call fails (EC2's rule). */
  function named(a: Account, ids: string[]): FakeInstance[] {
    for (const id of ids) if (!ID("i").test(id)) throw fail(400, "InvalidInstanceID.Malformed", `Invalid id: "${id}"`);
    const missing = ids.filter((id) => !a.instances.has(id));
    if (missing.length)
      throw fail(
        400,
        "InvalidInstanceID.NotFound",
        `The instance ID${missing.length > 1 ? "s" : ""} '${missing.join(", ")}' do${missing.length > 1 ? "" : "es"} not exist`,
      );
    return ids.map((id) => a.instances.get(id)!);
  }

  function describeInstances(a: Account, p: Record<string, string>): Xml[] {
    const ids = listParam(p, "InstanceId");
    const fs = filters(p);
    if (p.MaxResults !== undefined && ids.length)
      throw fail(400, "InvalidParameterCombination", "The parameter instancesSet cannot be used with the parameter maxResults");
    const max = p.MaxResults === undefined ? 1000 : Number(p.MaxResults);
    if (!Number.isInteger(max) || max < 5 || max > 1000)
      throw fail(
        400,
        "InvalidParameterValue",
        `Value ( ${p.MaxResults} ) for parameter maxResults is invalid. Expecting a value between 5 and 1000.`,
      );
    const pool = ids.length ? named(a, ids) : [...a.instances.values()];
    const all = pool.filter((i) => fs.every((f) => matches(i, f)));
    const key = createHash("sha256")
      .update(JSON.stringify([ids, fs]))
      .digest("hex")
      .slice(0, 16);
    let offset = 0;
    if (p.NextToken !== undefined) {
      const [k, o] = Buffer.from(p.NextToken, "base64url").toString().split(":");
      if (k !== key || !/^\d+$/.test(o ?? ""))
        throw fail(400, "InvalidParameterValue", "The token is invalid or was issued for another request");
      offset = Number(o);
    }
    const size = Math.min(max, a.config.page_size);
    const page = all.slice(offset, offset + size);
    const next = offset + size < all.length ? Buffer.from(`${key}:${offset + size}`).toString("base64url") : undefined;
    return [
      set(
        "reservationSet",
        page.map((i) => reservation(i, owner)),
      ),
      el("nextToken", next),
    ];
  }

  function changeState(a: Account, action: string, p: Record<string, string>): Xml[] {
    const ids = listParam(p, "InstanceId");
    if (!ids.length) throw fail(400, "MissingParameter", "The request must contain the parameter InstanceId");
    const targets = named(a, ids);
    for (const i of targets) {
      if (action === "StopInstances" && i.lifecycle === "spot")
        throw fail(
          400,
          "UnsupportedOperation",
          `You can't stop the Spot Instance '${i.instanceId}' because it is associated with a one-time Spot Instance request.`,
        );
      if (
        action !== "TerminateInstances" &&
        (i.state === "shutting-down" || i.state === "terminated" || (action === "StartInstances" && i.state === "stopping"))
      ) {
        throw fail(
          400,
          "IncorrectInstanceState",
          `The instance '${i.instanceId}' is not in a state from which it can be ${action === "StartInstances" ? "started" : "stopped"}.`,
        );
      }
    }
    const items = targets.map((i) => {
      const previous = i.state;
      if (action === "TerminateInstances" && i.state !== "terminated" && i.state !== "shutting-down") halt(a, i, "shutting-down");
      if (action === "StopInstances" && (i.state === "running" || i.state === "pending")) halt(a, i, "stopping");
      if (action === "StartInstances" && i.state === "stopped") {
        i.state = "pending";
        boot(a, i);
      }
      return [el("instanceId", i.instanceId), state("currentState", i.state), state("previousState", previous)];
    });
    return [set("instancesSet", items)];
  }

  function describeImages(a: Account, p: Record<string, string>): Xml[] {
    const ids = listParam(p, "ImageId");
    return [
      set(
        "imagesSet",
        ids.map((id) => {
          const img = image(a, id);
          return [
            el("imageId", id),
            el("imageLocation", `fake/${id}`),
            el("imageState", "available"),
            el("imageOwnerId", owner),
            el("isPublic", false),
            el("architecture", img.architecture),
            el("imageType", "machine"),
            el("platform", img.platform),
            el("name", `fake-image-${id}`),
            el("rootDeviceType", "ebs"),
            el("rootDeviceName", img.rootDeviceName),
          ];
        }),
      ),
    ];
  }

  function perform(a: Account, action: string, p: Record<string, string>): Xml[] {
    switch (action) {
      case "RunInstances":
        return runInstances(a, p);
      case "DescribeInstances":
        return describeInstances(a, p);
      case "TerminateInstances":
      case "StartInstances":
      case "StopInstances":
        return changeState(a, action, p);
      case "DescribeImages":
        return describeImages(a, p);
      case "DescribeInstanceTypes":
        return describeInstanceTypes(p, {
          names: listParam(p, "InstanceType"),
          filters: filters(p),
          pageSize: a.config.instance_types_page_size,
          fail,
        });
      default:
        throw fail(400, "InvalidAction", `The action ${action} is not valid for this web service.`);
    }
  }

  const xml = (res: ServerResponse, status: number, body: string, requestId: string) =>
    res.writeHead(status, { "content-type": "text/xml;charset=UTF-8", "x-amzn-requestid": requestId }).end(body);

  async function ec2(req: IncomingMessage, res: ServerResponse, raw: Buffer) {
    const requestId = randomUUID();
    const target = req.url ?? "/";
    const q = target.indexOf("?");
    const params: Record<string, string> = Object.fromEntries(new URLSearchParams(q < 0 ? "" : target.slice(q + 1)));
    if (String(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded"))
      Object.assign(params, Object.fromEntries(new URLSearchParams(raw.toString("utf8"))));
    const { Action: action = "", ...rest } = params;
    let account: Account | undefined;
    const record = (status: number, code: string | null) =>
      account?.requests.push({ at: Date.now(), action, params: rest, status, error_code: code, access_key_id: account.access_key_id });
    try {
      const check = verifySigV4({ method: req.method ?? "GET", target, rawHeaders: req.rawHeaders, body: raw }, "ec2", (key) => {
        const a = byKey.get(key);
        return a && { secretAccessKey: a.secret_access_key, region: a.region, sessionToken: a.session_token };
      });
      if (!check.ok) {
        // A known key with a bad signature still shows up in that account's log, as in CloudTrail.
        const m = /Credential=([^/]+)\//.exec(String(req.headers.authorization ?? ""));
        account = m ? byKey.get(m[1]!) : undefined;
        throw fail(check.status, check.code, check.message);
      }
      account = byKey.get(check.accessKeyId)!;
      if (!action) throw fail(400, "MissingAction", "The request must contain the parameter Action");
      if (!params.Version) throw fail(400, "MissingParameter", "The request must contain the parameter Version");
      const latency = account.faults.latency_ms[action];
      if (latency) await sleep(latency);
      const f: ActionFault | undefined = takeFault(account.faults.actions, (x) => x.action === undefined || x.action === action);
      if (f)
        throw fail(
          f.status ?? (f.code === "RequestLimitExceeded" ? 503 : 400),
          f.code,
          f.message ?? (f.code === "RequestLimitExceeded" ? "Request limit exceeded." : `${f.code} (injected)`),
        );
      const body = perform(account, action, rest);
      record(200, null);
      xml(res, 200, document(action, requestId, body), requestId);
    } catch (err) {
      if (!(err instanceof Ec2Failure)) throw err;
      record(err.status, err.code);
      xml(res, err.status, errorDocument(err.code, err.message, requestId), requestId);
    }
  }

  function json(res: ServerResponse, status: number, body?: unknown) {
    if (body === undefined) res.writeHead(status).end();
    else res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  }

  function control(req: IncomingMessage, res: ServerResponse, parts: string[], raw: Buffer) {
    const method = req.method ?? "GET";
    let body: any;
    try {
      body = raw.length ? JSON.parse(raw.toString("utf8")) : undefined;
    } catch {
      return json(res, 400, { error: "body is not JSON" });
    }
    if (parts.length === 0 && method === "POST") return json(res, 201, publicAccount(newAccount(body ?? {})));
    const a = accounts.get(parts[0] ?? "");
    if (!a) return json(res, 404, { error: "no such account" });
    const [, what, key] = parts;
    if (what === "instances" && !key && method === "GET") return json(res, 200, [...a.instances.values()]);
    if (what === "instances" && !key && method === "POST") {
      const n = a.nextIp++;
      const subnetId = body?.subnetId ?? DEFAULT_SUBNET;
      const i: FakeInstance = {
        instanceId: `i-${hex(17)}`,
        imageId: "ami-0123456789abcdef0",
        instanceType: "t3.micro",
        state: "running",
        subnetId,
        vpcId: "vpc-0fa4e0000000000a1",
        availabilityZone: azOf(a, subnetId),
        privateIp: `10.0.${(n >> 8) & 255}.${n & 255}`,
        tags: {},
        launchTime: new Date().toISOString().replace(/\.\d{3}Z$/, ".000Z"),
        architecture: "x86_64",
        securityGroupIds: [],
        ...body,
      };
      a.instances.set(i.instanceId, i);
      return json(res, 201, i);
    }
    if (what === "instances" && key && method === "PATCH") {
      const i = a.instances.get(key);
      if (!i) return json(res, 404, { error: "no such instance" });
      return json(res, 200, Object.assign(i, body ?? {}));
    }
    if (what === "requests" && method === "GET") return json(res, 200, a.requests);
    if (what === "faults" && method === "PUT") {
      a.faults = { launch: body?.launch ?? [], actions: body?.actions ?? [], latency_ms: body?.latency_ms ?? {} };
      return json(res, 200, a.faults);
    }
    if (what === "config" && method === "PATCH") {
      a.config = { ...a.config, ...body };
      return json(res, 200, a.config);
    }
    if (what === "reset" && method === "POST") {
      for (const i of a.instances.values()) if (LIVE.has(i.state)) opts.hooks?.stopped?.(a.id, i);
      a.instances.clear();
      a.tokens.clear();
      a.requests = [];
      a.faults = { launch: [], actions: [], latency_ms: {} };
      a.booted.clear();
      return json(res, 204);
    }
    return json(res, 404, { error: `no control route ${method} ${parts.join("/")}` });
  }

  const server = createServer(async (req, res) => {
    try {
      const raw = await readBody(req);
      const segments = (req.url ?? "/").split("?")[0]!.split("/").filter(Boolean);
      if (segments[0] === "_control" && segments[1] === "accounts") return control(req, res, segments.slice(2), raw);
      await ec2(req, res, raw);
    } catch (err) {
      if (!res.headersSent)
        xml(res, 500, errorDocument("InternalError", err instanceof Error ? err.message : String(err), randomUUID()), "");
    }
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    account: publicAccount(newAccount()),
    async stop() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
