import type { Flavor } from "../../src/providers/shim-protocol.ts";
import type { Ec2Api, Ec2Error } from "./ec2-api.ts";
import { describeInstanceTypesParams, type Filter } from "./ec2-params.ts";
import { type Ec2InstanceType, parseDescribeInstanceTypes } from "./ec2-xml.ts";
import type { ExtraSpecs } from "./extra-specs.ts";

/**
 * EC2's instance types as protocol v1.2 flavors: which types a pool's catalogue lists
 * (DescribeInstanceTypes filters), every page of them, and each one as a Flavor. Pure apart
 * from the EC2 calls.
 */

/** DescribeInstanceTypes pages: EC2's largest (100), and a bound on the calls one catalogue costs. */
export const TYPES_PAGE_SIZE = 100;
export const MAX_TYPE_PAGES = 20;

/**
 * The pool's instance_types when it names some (the only types its machines may be), else every
 * current-generation type: previous generations cost more for less and would crowd the choice.
 */
export function catalogueFilters(specs: Pick<ExtraSpecs, "instance_types">): Filter[] {
  if (specs.instance_types?.length) return [{ name: "instance-type", values: [...new Set(specs.instance_types)].sort() }];
  return [{ name: "current-generation", values: ["true"] }];
}

/** Every instance type matching the filters, following NextToken. */
export async function describeAllInstanceTypes(
  ec2: Ec2Api,
  filters: Filter[],
): Promise<{ ok: true; value: Ec2InstanceType[] } | { ok: false; error: Ec2Error }> {
  const out: Ec2InstanceType[] = [];
  let nextToken: string | undefined;
  for (let page = 0; page < MAX_TYPE_PAGES; page++) {
    const r = await ec2.call("DescribeInstanceTypes", describeInstanceTypesParams({ filters, maxResults: TYPES_PAGE_SIZE, nextToken }));
    if (!r.ok) return r;
    const p = parseDescribeInstanceTypes(r.doc);
    out.push(...p.types);
    if (!p.nextToken) return { ok: true, value: out };
    nextToken = p.nextToken;
  }
  const message = `more than ${MAX_TYPE_PAGES * TYPES_PAGE_SIZE} instance types`;
  return { ok: false, error: { code: "TooManyPages", message, status: 0 } };
}

/**
 * An instance type as a flavor, or null when no runner can use it: an i386-only type, a Mac
 * (x86_64_mac, arm64_mac: dedicated hosts, which RunInstances alone cannot get), or an item
 * without sizes. EC2's API has no prices, and the root disk is an EBS volume sized per machine.
 */
export function toFlavor(t: Ec2InstanceType): Flavor | null {
  const architecture = t.architectures.includes("x86_64") ? "amd64" : t.architectures.includes("arm64") ? "arm64" : null;
  const dot = t.instanceType.indexOf(".");
  if (!architecture || dot < 1 || !(t.vcpus >= 1) || !(t.memoryMib >= 1)) return null;
  const gpus = t.gpus.filter((g) => g.count >= 1);
  const count = gpus.reduce((n, g) => n + g.count, 0);
  const models = [...new Set(gpus.map((g) => `${g.manufacturer} ${g.name}`.trim()).filter(Boolean))];
  return {
    name: t.instanceType,
    vcpus: Math.round(t.vcpus),
    memory_mib: Math.round(t.memoryMib),
    architecture,
    family: t.instanceType.slice(0, dot).toLowerCase(),
    gpu: count ? { count, model: models.join(" + ") || "GPU" } : null,
    disk_gb: null,
    price_per_hour: null,
    spot: t.usageClasses.includes("spot"),
  };
}

/** The catalogue's flavors: each usable type once, by name. */
export function toFlavors(types: Ec2InstanceType[]): Flavor[] {
  const byName = new Map<string, Flavor>();
  for (const t of types) {
    const f = toFlavor(t);
    if (f && !byName.has(f.name)) byName.set(f.name, f);
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
