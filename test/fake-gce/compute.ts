import { randomBytes } from "node:crypto";
import { matchesFilter, parseFilter } from "./filter.ts";
import type { GceFaults, GceInstance, GceProjectConfig, InsertFault, MethodFault, RecordedGceRequest, ServiceAccountKey } from "./types.ts";

/**
 * One fake Compute Engine project: its instances, operations, faults and request log, and the
 * instances.* and zoneOperations.* methods over them (paths, bodies and answers as the Compute
 * Engine v1 discovery document describes them; test/contract/gce-discovery.test.ts checks it).
 * Instances go PROVISIONING → RUNNING, STOPPING → TERMINATED (stopped) or gone (deleted) on
 * timers; every mutating call answers an Operation that is RUNNING until `operation_ms` passes,
 * then DONE — with error.errors when an insert fault applies, as GCE reports
 * ZONE_RESOURCE_POOL_EXHAUSTED and QUOTA_EXCEEDED.
 */

export class GceFailure extends Error {
  status: number;
  reason: string;
  constructor(status: number, reason: string, message: string) {
    super(message);
    this.status = status;
    this.reason = reason;
  }
}

export const fail = (status: number, reason: string, message: string) => new GceFailure(status, reason, message);

export const DEFAULT_CONFIG: Required<GceProjectConfig> = {
  page_size: 500,
  machine_types_page_size: 5,
  operation_ms: 30,
  boot_delay_ms: 60,
  stop_delay_ms: 60,
  wait_cap_ms: 120_000,
  token_ttl_s: 3600,
  zones: ["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f", "europe-west1-b", "europe-west1-c", "europe-west1-d"],
  missing_images: [],
  denied_permissions: [],
};

export interface GceOperation {
  kind: "compute#operation";
  id: string;
  name: string;
  zone: string;
  operationType: string;
  targetLink: string;
  targetId: string;
  status: "PENDING" | "RUNNING" | "DONE";
  progress: number;
  insertTime: string;
  startTime: string;
  endTime?: string;
  selfLink: string;
  user: string;
  error?: { errors: { code: string; message: string }[] };
  httpErrorStatusCode?: number;
  httpErrorMessage?: string;
}

export interface ProjectHooks {
  booted?(project: string, instance: GceInstance): void;
  stopped?(project: string, instance: GceInstance): void;
}

const NAME = /^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL_KEY = /^[a-z][a-z0-9_-]{0,62}$/;
const LABEL_VALUE = /^[a-z0-9_-]{0,63}$/;
const uint64 = () => String(BigInt(`0x${randomBytes(8).toString("hex")}`) >> 1n);
const OP_ERROR_STATUS: Record<string, [number, string]> = {
  ZONE_RESOURCE_POOL_EXHAUSTED: [503, "SERVICE UNAVAILABLE"],
  ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS: [503, "SERVICE UNAVAILABLE"],
  QUOTA_EXCEEDED: [403, "FORBIDDEN"],
};

export class FakeProject {
  instances = new Map<string, GceInstance>();
  operations = new Map<string, { op: GceOperation; waiters: (() => void)[] }>();
  requests: RecordedGceRequest[] = [];
  faults: Required<GceFaults> = { insert: [], methods: [], latency_ms: {} };
  config: Required<GceProjectConfig>;
  nextIp = 2;
  private timers = new Set<NodeJS.Timeout>();

  id: string;
  key: ServiceAccountKey;
  publicKeyPem: string;
  /** The compute API root, {url}/compute/v1/. */
  base: string;
  private hooks: ProjectHooks;

  constructor(id: string, key: ServiceAccountKey, publicKeyPem: string, base: string, config: GceProjectConfig, hooks: ProjectHooks) {
    this.id = id;
    this.key = key;
    this.publicKeyPem = publicKeyPem;
    this.base = base;
    this.config = { ...DEFAULT_CONFIG, ...config, zones: config.zones ?? DEFAULT_CONFIG.zones };
    this.hooks = hooks;
  }

  zoneUrl = (zone: string) => `${this.base}projects/${this.id}/zones/${zone}`;
  private later(ms: number, fn: () => void) {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  reset() {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const { waiters } of this.operations.values()) for (const w of waiters) w();
    this.instances.clear();
    this.operations.clear();
    this.requests = [];
    this.faults = { insert: [], methods: [], latency_ms: {} };
  }

  checkZone(zone: string) {
    if (!this.config.zones.includes(zone)) throw fail(400, "invalid", `Invalid value for field 'zone': '${zone}'. Unknown zone.`);
  }

  /** The permissions checked since the server last replaced this list (one request's, as the calls are synchronous). */
  checked: string[] = [];

  require(permission: string, resource: string) {
    this.checked.push(permission);
    if (this.config.denied_permissions.includes(permission))
      throw fail(403, "forbidden", `Required '${permission}' permission for '${resource}'`);
  }

  takeFault<T extends { times?: number; probability?: number }>(list: T[], match: (f: T) => boolean): T | undefined {
    const f = list.find((x) => match(x) && (x.probability === undefined || Math.random() < x.probability));
    if (!f) return undefined;
    if (f.times !== undefined) {
      f.times--;
      if (f.times <= 0) list.splice(list.indexOf(f), 1);
    }
    return f;
  }

  methodFault(method: string): MethodFault | undefined {
    return this.takeFault(this.faults.methods, (f) => f.method === undefined || f.method === method);
  }

  private key_(zone: string, name: string) {
    return `${zone}/${name}`;
  }

  instance(zone: string, name: string): GceInstance {
    const i = this.instances.get(this.key_(zone, name));
    if (!i) throw fail(404, "notFound", `The resource 'projects/${this.id}/zones/${zone}/instances/${name}' was not found`);
    return i;
  }

  private newOperation(zone: string, type: string, target: GceInstance): GceOperation {
    const now = new Date().toISOString();
    const name = `operation-${Date.now()}-${randomBytes(6).toString("hex")}-${randomBytes(4).toString("hex")}`;
    const op: GceOperation = {
      kind: "compute#operation",
      id: uint64(),
      name,
      zone: this.zoneUrl(zone),
      operationType: type,
      targetLink: target.selfLink,
      targetId: target.id,
      status: "RUNNING",
      progress: 0,
      insertTime: now,
      startTime: now,
      selfLink: `${this.zoneUrl(zone)}/operations/${name}`,
      user: this.key.client_email,
    };
    this.operations.set(name, { op, waiters: [] });
    return op;
  }

  private finish(op: GceOperation, after: number, effect: () => { code: string; message: string } | undefined) {
    this.later(after, () => {
      const error = effect();
      op.status = "DONE";
      op.progress = 100;
      op.endTime = new Date().toISOString();
      if (error) {
        op.error = { errors: [error] };
        const [code, text] = OP_ERROR_STATUS[error.code] ?? [400, "BAD REQUEST"];
        op.httpErrorStatusCode = code;
        op.httpErrorMessage = text;
      }
      const entry = this.operations.get(op.name);
      if (entry) for (const w of entry.waiters.splice(0)) w();
    });
  }

  /** What an insert body asks for, in IAM permissions (GCE checks each; docs/gce-shim.md lists them). */
  private insertPermissions(body: GceInstance): string[] {
    const p = ["compute.instances.create", "compute.disks.create", "compute.subnetworks.use"];
    if (body.networkInterfaces?.some((n) => n.accessConfigs?.length)) p.push("compute.subnetworks.useExternalIp");
    if (body.metadata?.items?.length) p.push("compute.instances.setMetadata");
    if (body.tags?.items?.length) p.push("compute.instances.setTags");
    if (body.labels && Object.keys(body.labels).length) p.push("compute.instances.setLabels");
    if (body.serviceAccounts?.length) p.push("compute.instances.setServiceAccount", "iam.serviceAccounts.actAs");
    return p;
  }

  private validate(zone: string, body: GceInstance) {
    const invalid = (field: string, why: string) => fail(400, "invalid", `Invalid value for field '${field}': ${why}`);
    if (typeof body.name !== "string" || !NAME.test(body.name))
      throw invalid("resource.name", `'${String(body.name)}'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'`);
    const mt = String(body.machineType ?? "");
    const m = /(?:^|\/)zones\/([^/]+)\/machineTypes\/([a-z0-9-]+)$/.exec(mt);
    if (!m) throw invalid("resource.machineType", `'${mt}'. Invalid machine type URL.`);
    if (m[1] !== zone) throw invalid("resource.machineType", `'${mt}'. Machine type must be in zone ${zone}.`);
    const boot = body.disks?.find((d) => d.boot);
    const params = boot?.initializeParams as { sourceImage?: string; diskSizeGb?: string; diskType?: string } | undefined;
    if (!params?.sourceImage) throw fail(400, "required", "Required field 'resource.disks[0].initializeParams.sourceImage' not specified");
    if (this.config.missing_images.some((x) => params.sourceImage!.endsWith(x)))
      throw fail(404, "notFound", `The resource '${params.sourceImage}' was not found`);
    for (const [k, v] of Object.entries(body.labels ?? {}))
      if (!LABEL_KEY.test(k) || typeof v !== "string" || !LABEL_VALUE.test(v))
        throw invalid(`labels.${k}`, `'${String(v)}'. Label keys and values must be lowercase letters, digits, _ and -, at most 63.`);
    for (const t of body.tags?.items ?? [])
      if (!NAME.test(t)) throw invalid("resource.tags.items", `'${t}'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'`);
    const items = body.metadata?.items ?? [];
    let total = 0;
    for (const it of items) {
      const size = Buffer.byteLength(it.key) + Buffer.byteLength(it.value ?? "");
      if (Buffer.byteLength(it.value ?? "") > 262144)
        throw invalid(`resource.metadata.items.value`, `Metadata value for key '${it.key}' exceeds 262144 bytes.`);
      total += size;
    }
    if (total > 512 * 1024) throw invalid("resource.metadata", "Metadata total size exceeds 512 KB.");
  }

  insert(zone: string, body: GceInstance): GceOperation {
    this.checkZone(zone);
    this.validate(zone, body);
    for (const p of this.insertPermissions(body)) this.require(p, `projects/${this.id}/zones/${zone}/instances/${body.name}`);
    if (this.instances.has(this.key_(zone, body.name)))
      throw fail(409, "alreadyExists", `The resource 'projects/${this.id}/zones/${zone}/instances/${body.name}' already exists`);
    const machineType = /machineTypes\/([a-z0-9-]+)$/.exec(String(body.machineType))![1]!;
    const model = body.scheduling?.provisioningModel === "SPOT" ? "SPOT" : "STANDARD";
    const fault = this.takeFault(
      this.faults.insert,
      (f: InsertFault) =>
        (f.zone === undefined || f.zone === zone) &&
        (f.provisioning_model === undefined || f.provisioning_model === model) &&
        (f.machine_type === undefined || f.machine_type === machineType),
    );
    if (fault?.http)
      throw fail(fault.http, fault.code, fault.message ?? `Quota 'CPUS' exceeded. Limit: 8.0 in region ${zone.slice(0, -2)}.`);
    const id = uint64();
    const selfLink = `${this.zoneUrl(zone)}/instances/${body.name}`;
    const ip = this.nextIp++;
    const instance: GceInstance = {
      ...body,
      kind: "compute#instance",
      id,
      name: body.name,
      zone: this.zoneUrl(zone),
      machineType: `${this.zoneUrl(zone)}/machineTypes/${machineType}`,
      status: "PROVISIONING",
      creationTimestamp: new Date().toISOString(),
      selfLink,
      labelFingerprint: randomBytes(8).toString("base64"),
      cpuPlatform: "Unknown CPU Platform",
      networkInterfaces: (body.networkInterfaces ?? [{}]).map((n, k) => ({
        ...n,
        name: `nic${k}`,
        network: n.network ?? `${this.base}projects/${this.id}/global/networks/default`,
        networkIP: `10.128.${(ip >> 8) & 255}.${ip & 255}`,
        accessConfigs: n.accessConfigs?.map((a) => ({ ...a, kind: "compute#accessConfig", natIP: `34.1.${(ip >> 8) & 255}.${ip & 255}` })),
      })),
      // GCE answers a disk as attached; initializeParams is input only, "not returned in the context of instance".
      disks: (body.disks ?? []).map(({ initializeParams, ...d }, k) => {
        const params = (initializeParams ?? {}) as { sourceImage?: string; diskSizeGb?: string; diskName?: string };
        const image = String(params.sourceImage ?? "");
        return {
          type: "PERSISTENT",
          mode: "READ_WRITE",
          deviceName: `persistent-disk-${k}`,
          index: k,
          diskSizeGb: params.diskSizeGb ?? "10",
          source: `${this.zoneUrl(zone)}/disks/${params.diskName ?? (k === 0 ? body.name : `${body.name}-${k}`)}`,
          ...d,
          kind: "compute#attachedDisk",
          licenses: image.includes("windows-cloud") ? [`${this.base}projects/windows-cloud/global/licenses/windows-server`] : [],
        };
      }),
    };
    const op = this.newOperation(zone, "insert", instance);
    const k = this.key_(zone, body.name);
    this.instances.set(k, instance);
    // PROVISIONING until the operation is done, then RUNNING after the boot delay (or gone, when a fault applies).
    const boot = () => {
      if (this.instances.get(k) !== instance || instance.status !== "PROVISIONING") return;
      instance.status = "RUNNING";
      this.hooks.booted?.(this.id, instance);
    };
    this.finish(op, this.config.operation_ms, () => {
      if (!fault) {
        this.later(this.config.boot_delay_ms, boot);
        return undefined;
      }
      this.instances.delete(k);
      const asked = this.requests.findLast(
        (r) => r.method === "compute.instances.insert" && r.zone === zone && (r.body as GceInstance)?.name === body.name,
      );
      if (asked) asked.error = fault.code;
      return {
        code: fault.code,
        message:
          fault.message ??
          (fault.code.startsWith("ZONE_RESOURCE_POOL_EXHAUSTED")
            ? `The zone 'projects/${this.id}/zones/${zone}' does not have enough resources available to fulfill the request.  Try a different zone, or try again later.`
            : `Quota '${model === "SPOT" ? "PREEMPTIBLE_CPUS" : "CPUS"}' exceeded.  Limit: 8.0 in region ${zone.slice(0, -2)}.`),
      };
    });
    return op;
  }

  get(zone: string, name: string): GceInstance {
    this.checkZone(zone);
    this.require("compute.instances.get", `projects/${this.id}/zones/${zone}/instances/${name}`);
    return this.instance(zone, name);
  }

  delete(zone: string, name: string): GceOperation {
    this.checkZone(zone);
    this.require("compute.instances.delete", `projects/${this.id}/zones/${zone}/instances/${name}`);
    const i = this.instance(zone, name);
    const op = this.newOperation(zone, "delete", i);
    const was = i.status;
    i.status = "STOPPING";
    this.finish(op, Math.max(this.config.operation_ms, this.config.stop_delay_ms), () => {
      if (this.instances.get(this.key_(zone, name)) === i) this.instances.delete(this.key_(zone, name));
      if (was !== "TERMINATED") this.hooks.stopped?.(this.id, i);
      return undefined;
    });
    return op;
  }

  /** start on a RUNNING instance and stop on a stopped one succeed and change nothing, as in GCE. */
  startStop(zone: string, name: string, what: "start" | "stop"): GceOperation {
    this.checkZone(zone);
    this.require(`compute.instances.${what}`, `projects/${this.id}/zones/${zone}/instances/${name}`);
    const i = this.instance(zone, name);
    // GCE refuses to start an instance still on its way down (400 resourceNotReady), as EC2 does.
    if (what === "start" && (i.status === "STOPPING" || i.status === "SUSPENDING"))
      throw fail(400, "resourceNotReady", `The resource 'projects/${this.id}/zones/${zone}/instances/${name}' is not ready`);
    const op = this.newOperation(zone, what, i);
    if (what === "stop" && i.status !== "TERMINATED") {
      i.status = "STOPPING";
      this.finish(op, Math.max(this.config.operation_ms, this.config.stop_delay_ms), () => {
        i.status = "TERMINATED";
        this.hooks.stopped?.(this.id, i);
        return undefined;
      });
    } else if (what === "start" && (i.status === "TERMINATED" || i.status === "STOPPED")) {
      i.status = "STAGING";
      this.finish(op, Math.max(this.config.operation_ms, this.config.boot_delay_ms), () => {
        i.status = "RUNNING";
        this.hooks.booted?.(this.id, i);
        return undefined;
      });
    } else this.finish(op, this.config.operation_ms, () => undefined);
    return op;
  }

  operation(zone: string, name: string): { op: GceOperation; waiters: (() => void)[] } {
    this.checkZone(zone);
    this.require("compute.zoneOperations.get", `projects/${this.id}/zones/${zone}/operations/${name}`);
    const entry = this.operations.get(name);
    if (!entry?.op.zone.endsWith(`/zones/${zone}`))
      throw fail(404, "notFound", `The resource 'projects/${this.id}/zones/${zone}/operations/${name}' was not found`);
    return entry;
  }

  /** Instances matching the filter, by zone then name (GCE's order), one page of them. */
  page(query: URLSearchParams, zone: string | null): { items: GceInstance[]; nextPageToken?: string } {
    if (zone) this.checkZone(zone);
    this.require("compute.instances.list", `projects/${this.id}`);
    const terms = parseFilter(query.get("filter") ?? "");
    if (!terms) throw fail(400, "invalid", `Invalid value for field 'filter': '${query.get("filter")}'. Invalid list filter expression.`);
    const max = Number(query.get("maxResults") ?? 500);
    if (!Number.isInteger(max) || max < 0 || max > 500)
      throw fail(400, "invalid", `Invalid value for field 'maxResults': '${query.get("maxResults")}'. Must be in the range [0, 500].`);
    const size = Math.min(max || 500, this.config.page_size);
    const all = [...this.instances.values()]
      .filter((i) => (zone === null || i.zone.endsWith(`/zones/${zone}`)) && matchesFilter(i, terms))
      .sort((a, b) => a.zone.localeCompare(b.zone) || a.name.localeCompare(b.name));
    let start = 0;
    const token = query.get("pageToken");
    if (token) {
      start = Number(Buffer.from(token, "base64url").toString());
      if (!Number.isInteger(start) || start < 0) throw fail(400, "invalid", `Invalid value for field 'pageToken': '${token}'.`);
    }
    const items = all.slice(start, start + size);
    return { items, ...(start + size < all.length ? { nextPageToken: Buffer.from(String(start + size)).toString("base64url") } : {}) };
  }
}
