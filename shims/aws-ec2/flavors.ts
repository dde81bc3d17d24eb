import type { Flavor } from "../../src/providers/shim-protocol.ts";
import { createCatalogueCache } from "../common/catalogue-cache.ts";
import type { Ec2Api, Ec2Error } from "./ec2-api.ts";
import { answer, ec2ErrorAnswer, type ShimAnswer } from "./errors.ts";
import { parseExtraSpecs } from "./extra-specs.ts";
import { catalogueFilters, describeAllInstanceTypes, toFlavors } from "./instance-types.ts";

/**
 * `GET /v1/flavors` (protocol v1.2) over EC2: the instance types the pool may be given, from
 * DescribeInstanceTypes, kept in the isolate for ten minutes per account, region and filter.
 */

const cache = createCatalogueCache<Flavor[], Ec2Error>();

export interface FlavorsContext {
  ec2: Ec2Api;
  /** Who asks where: the endpoint, region and access key, so two accounts never share a catalogue. */
  account: string;
  /** The scale set's extra specs from X-Edgerunner-Pool-Extra-Specs. */
  headerSpecs: unknown;
  now?: () => number;
}

export async function flavors(o: FlavorsContext, log: Record<string, unknown>): Promise<ShimAnswer> {
  const specs = parseExtraSpecs(o.headerSpecs);
  if (!specs.ok) return answer(400, { error: `cannot list flavors: ${specs.problems.join("; ")}`, details: specs.problems });
  const filters = catalogueFilters(specs.specs);
  const key = [o.account, JSON.stringify(filters)].join("\n");
  const { result, cached } = await cache.get(
    key,
    async () => {
      const types = await describeAllInstanceTypes(o.ec2, filters);
      return types.ok ? { ok: true, value: toFlavors(types.value) } : types;
    },
    o.now,
  );
  log.catalogue_cached = cached;
  if (!result.ok) return ec2ErrorAnswer("DescribeInstanceTypes", result.error, "cannot list flavors");
  return answer(200, { flavors: result.value, currency: "USD" });
}
