import { createHash } from "node:crypto";
import { glob } from "./filter-glob.ts";
import { FAKE_INSTANCE_TYPES, type FakeInstanceType } from "./instance-types.ts";
import { el, set, textSet, type Xml } from "./xml.ts";

/**
 * The fake EC2's DescribeInstanceTypes: the instance types of ./instance-types.ts by
 * `InstanceType.N` or filters, paged with MaxResults (5 to 100, as EC2 takes) and NextToken, each
 * item element for element as EC2 writes an InstanceTypeInfo (test/contract checks AWS's SDK
 * reads it).
 */

/** The filters the fake knows, by EC2's names; any other is refused as EC2 refuses an unknown one. */
const FILTERS: Record<string, (t: FakeInstanceType) => string[]> = {
  "instance-type": (t) => [t.instanceType],
  "current-generation": (t) => [String(t.currentGeneration)],
  "processor-info.supported-architecture": (t) => t.supportedArchitectures,
  "supported-usage-class": (t) => t.supportedUsageClasses,
  "bare-metal": (t) => [String(t.bareMetal)],
  "burstable-performance-supported": (t) => [String(t.burstable)],
};

type Fail = (status: number, code: string, message: string) => Error;

function item(t: FakeInstanceType): Xml[] {
  const gpuMiB = (t.gpus ?? []).reduce((n, g) => n + g.count * g.memoryMiB, 0);
  return [
    el("instanceType", t.instanceType),
    el("currentGeneration", t.currentGeneration),
    el("freeTierEligible", t.instanceType === "t2.micro" || t.instanceType === "t3.micro"),
    textSet("supportedUsageClasses", t.supportedUsageClasses),
    textSet("supportedRootDeviceTypes", ["ebs"]),
    textSet("supportedVirtualizationTypes", ["hvm"]),
    el("bareMetal", t.bareMetal),
    el("hypervisor", t.bareMetal ? undefined : /^(t2|m3)\./.test(t.instanceType) ? "xen" : "nitro"),
    el("processorInfo", [textSet("supportedArchitectures", t.supportedArchitectures), el("manufacturer", t.manufacturer)]),
    el("vCpuInfo", [
      el("defaultVCpus", t.defaultVCpus),
      el("defaultCores", t.defaultCores),
      el("defaultThreadsPerCore", t.defaultThreadsPerCore),
    ]),
    el("memoryInfo", [el("sizeInMiB", t.sizeInMiB)]),
    el("instanceStorageSupported", t.instanceStorageGB !== undefined),
    el(
      "instanceStorageInfo",
      t.instanceStorageGB === undefined
        ? undefined
        : [
            el("totalSizeInGB", t.instanceStorageGB),
            set("disks", [[el("sizeInGB", t.instanceStorageGB), el("count", 1), el("type", "ssd")]]),
            el("nvmeSupport", "required"),
          ],
    ),
    el(
      "gpuInfo",
      t.gpus?.length
        ? [
            set(
              "gpus",
              t.gpus.map((g) => [
                el("name", g.name),
                el("manufacturer", g.manufacturer),
                el("count", g.count),
                el("memoryInfo", [el("sizeInMiB", g.memoryMiB)]),
              ]),
            ),
            el("totalGpuMemoryInMiB", gpuMiB),
          ]
        : undefined,
    ),
    el("burstablePerformanceSupported", t.burstable),
  ];
}

/** `names`: the call's InstanceType.N; `filters`: its Filter.N; `pageSize`: the account's page size. */
export function describeInstanceTypes(
  p: Record<string, string>,
  o: { names: string[]; filters: { name: string; values: string[] }[]; pageSize: number; fail: Fail },
): Xml[] {
  const names = o.names;
  const unknown = names.filter((n) => !FAKE_INSTANCE_TYPES.some((t) => t.instanceType === n));
  if (unknown.length)
    throw o.fail(400, "InvalidInstanceType", `The following supplied instance types do not exist: [${unknown.join(", ")}]`);
  for (const f of o.filters) if (!FILTERS[f.name]) throw o.fail(400, "InvalidParameterValue", `The filter '${f.name}' is invalid`);
  const max = p.MaxResults === undefined ? 100 : Number(p.MaxResults);
  if (!Number.isInteger(max) || max < 5 || max > 100)
    throw o.fail(
      400,
      "InvalidParameterValue",
      `Value ( ${p.MaxResults} ) for parameter maxResults is invalid. Expecting a value between 5 and 100.`,
    );
  const all = FAKE_INSTANCE_TYPES.filter(
    (t) =>
      (!names.length || names.includes(t.instanceType)) &&
      o.filters.every((f) => FILTERS[f.name]!(t).some((v) => f.values.some((x) => glob(x).test(v)))),
  );
  const key = createHash("sha256")
    .update(JSON.stringify([names, o.filters]))
    .digest("hex")
    .slice(0, 16);
  let offset = 0;
  if (p.NextToken !== undefined) {
    const [k, n] = Buffer.from(p.NextToken, "base64url").toString().split(":");
    if (k !== key || !/^\d+$/.test(n ?? ""))
      throw o.fail(400, "InvalidParameterValue", "The token is invalid or was issued for another request");
    offset = Number(n);
  }
  const size = Math.min(max, o.pageSize);
  const next = offset + size < all.length ? Buffer.from(`${key}:${offset + size}`).toString("base64url") : undefined;
  return [set("instanceTypeSet", all.slice(offset, offset + size).map(item)), el("nextToken", next)];
}
