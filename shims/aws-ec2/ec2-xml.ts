import { XMLParser } from "fast-xml-parser";

/**
 * EC2's XML answers read into plain objects. EC2 wraps every list in `<item>` elements
 * (`instancesSet`, `tagSet`, `reservationSet`, …) and errors in
 * `<Response><Errors><Error><Code>…`. Pure.
 */

export interface Ec2Instance {
  instanceId: string;
  /** pending | running | shutting-down | terminated | stopping | stopped */
  state: string;
  instanceType: string;
  imageId?: string;
  subnetId?: string;
  availabilityZone?: string;
  privateIp?: string;
  publicIp?: string;
  /** "windows" for Windows instances, absent for Linux. */
  platform?: string;
  architecture?: string;
  clientToken?: string;
  /** "spot" for spot instances, absent for on-demand. */
  lifecycle?: string;
  launchTime?: string;
  tags: Record<string, string>;
}

export interface Ec2StateChange {
  instanceId: string;
  currentState: string;
  previousState: string;
}

export interface Ec2Image {
  imageId: string;
  rootDeviceName?: string;
  platform?: string;
  architecture?: string;
}

export interface Ec2ErrorBody {
  code: string;
  message: string;
  requestId?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: EC2 XML parsed into a tree whose shape each action knows
type Node = Record<string, any>;

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  // Ids and numbers stay strings: "0123" and "1e5" are names here, not numbers.
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => name === "item" || name === "Error",
  processEntities: true,
});

export function parseXml(text: string): Node {
  return parser.parse(text) as Node;
}

/** The items of an EC2 list element (`<instancesSet><item>…</item></instancesSet>`), empty when absent or empty. */
const items = (set: unknown): Node[] => (set && typeof set === "object" && Array.isArray((set as Node).item) ? (set as Node).item : []);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

function instance(n: Node): Ec2Instance {
  const tags: Record<string, string> = {};
  for (const t of items(n.tagSet)) if (typeof t.key === "string") tags[t.key] = typeof t.value === "string" ? t.value : "";
  return {
    instanceId: String(n.instanceId ?? ""),
    state: String(n.instanceState?.name ?? "unknown"),
    instanceType: String(n.instanceType ?? ""),
    imageId: str(n.imageId),
    subnetId: str(n.subnetId),
    availabilityZone: str(n.placement?.availabilityZone),
    privateIp: str(n.privateIpAddress),
    publicIp: str(n.ipAddress),
    platform: str(n.platform),
    architecture: str(n.architecture),
    clientToken: str(n.clientToken),
    lifecycle: str(n.instanceLifecycle),
    launchTime: str(n.launchTime),
    tags,
  };
}

const body = (doc: Node, root: string): Node => {
  const b = doc[root];
  if (!b || typeof b !== "object") throw new Error(`EC2 answer has no ${root}`);
  return b;
};

/** RunInstancesResponse: the launched instances. */
export function parseRunInstances(doc: Node): Ec2Instance[] {
  return items(body(doc, "RunInstancesResponse").instancesSet).map(instance);
}

/** DescribeInstancesResponse: instances of every reservation on this page, and the next page's token. */
export function parseDescribeInstances(doc: Node): { instances: Ec2Instance[]; nextToken: string | null } {
  const b = body(doc, "DescribeInstancesResponse");
  return {
    instances: items(b.reservationSet).flatMap((r) => items(r.instancesSet).map(instance)),
    nextToken: str(b.nextToken) ?? null,
  };
}

/** Terminate/Start/StopInstancesResponse. */
export function parseStateChanges(doc: Node, action: "TerminateInstances" | "StartInstances" | "StopInstances"): Ec2StateChange[] {
  return items(body(doc, `${action}Response`).instancesSet).map((n) => ({
    instanceId: String(n.instanceId ?? ""),
    currentState: String(n.currentState?.name ?? "unknown"),
    previousState: String(n.previousState?.name ?? "unknown"),
  }));
}

export function parseDescribeImages(doc: Node): Ec2Image[] {
  return items(body(doc, "DescribeImagesResponse").imagesSet).map((n) => ({
    imageId: String(n.imageId ?? ""),
    rootDeviceName: str(n.rootDeviceName),
    platform: str(n.platform),
    architecture: str(n.architecture),
  }));
}

/** One item of DescribeInstanceTypes: the fields a flavor is made of. */
export interface Ec2InstanceType {
  instanceType: string;
  currentGeneration: boolean;
  /** vCpuInfo.defaultVCpus; NaN when EC2 gave none. */
  vcpus: number;
  /** memoryInfo.sizeInMiB; NaN when EC2 gave none. */
  memoryMib: number;
  /** processorInfo.supportedArchitectures: i386, x86_64, arm64, x86_64_mac, arm64_mac. */
  architectures: string[];
  /** supportedUsageClasses: on-demand, spot, capacity-block. */
  usageClasses: string[];
  gpus: { name: string; manufacturer: string; count: number }[];
}

const texts = (set: unknown): string[] => items(set).flatMap((v) => (typeof v === "string" && v !== "" ? [v] : []));

/** DescribeInstanceTypesResponse: this page's types (`<instanceTypeSet><item>`), and the next page's token. */
export function parseDescribeInstanceTypes(doc: Node): { types: Ec2InstanceType[]; nextToken: string | null } {
  const b = body(doc, "DescribeInstanceTypesResponse");
  return {
    types: items(b.instanceTypeSet).map((n) => ({
      instanceType: String(n.instanceType ?? ""),
      currentGeneration: n.currentGeneration === "true",
      vcpus: Number(n.vCpuInfo?.defaultVCpus ?? Number.NaN),
      memoryMib: Number(n.memoryInfo?.sizeInMiB ?? Number.NaN),
      architectures: texts(n.processorInfo?.supportedArchitectures),
      usageClasses: texts(n.supportedUsageClasses),
      gpus: items(n.gpuInfo?.gpus).map((g) => ({
        name: str(g.name) ?? "",
        manufacturer: str(g.manufacturer) ?? "",
        count: Number(g.count ?? 0),
      })),
    })),
    nextToken: str(b.nextToken) ?? null,
  };
}

/** EC2's error document; null when the text is not one (an HTML page from a proxy, say). */
export function parseError(text: string): Ec2ErrorBody | null {
  let doc: Node;
  try {
    doc = parseXml(text);
  } catch {
    return null;
  }
  const e = doc.Response?.Errors?.Error?.[0];
  if (!e || typeof e.Code !== "string") return null;
  return { code: e.Code, message: typeof e.Message === "string" ? e.Message : "", requestId: str(doc.Response?.RequestID) };
}
