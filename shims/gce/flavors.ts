import type { Flavor } from "../../src/providers/shim-protocol.ts";
import { createCatalogueCache } from "../common/catalogue-cache.ts";
import { answer, gceErrorAnswer, type ShimAnswer } from "./errors.ts";
import { parseExtraSpecs } from "./extra-specs.ts";
import type { GceApi, GceError } from "./gce-api.ts";
import { type GceMachineType, inEveryZone, listMachineTypes, toFlavors } from "./machine-types.ts";

/**
 * `GET /v1/flavors` (protocol v1.2) over Compute Engine: the machine types every zone of the
 * pool has, from machineTypes.list, kept in the isolate for ten minutes per project and zones.
 */

const cache = createCatalogueCache<Flavor[], GceError>();

export interface FlavorsContext {
  gce: GceApi;
  project: string;
  /** Who asks where: the endpoint and service account, so two accounts never share a catalogue. */
  account: string;
  /** The scale set's extra specs from X-Edgerunner-Pool-Extra-Specs. */
  headerSpecs: unknown;
  /** The Worker's GCE_ZONES, used when extra_specs name none. */
  zones: string[];
  now?: () => number;
}

export async function flavors(o: FlavorsContext, log: Record<string, unknown>): Promise<ShimAnswer> {
  const specs = parseExtraSpecs(o.headerSpecs);
  if (!specs.ok) return answer(400, { error: `cannot list flavors: ${specs.problems.join("; ")}`, details: specs.problems });
  const zones = [...new Set(specs.specs.zones ?? o.zones)].sort();
  if (!zones.length) return answer(400, { error: "cannot list flavors: no zone: set extra_specs.zones (or the Worker's GCE_ZONES)" });
  const key = [o.account, o.project, ...zones].join("\n");
  const { result, cached } = await cache.get(
    key,
    async () => {
      const perZone: GceMachineType[][] = [];
      for (const zone of zones) {
        const listed = await listMachineTypes(o.gce, o.project, zone);
        if (!listed.ok) return listed;
        perZone.push(listed.value);
      }
      return { ok: true, value: toFlavors(inEveryZone(perZone)) };
    },
    o.now,
  );
  log.catalogue_cached = cached;
  if (!result.ok) return gceErrorAnswer(result.error, "cannot list flavors");
  return answer(200, { flavors: result.value, currency: "USD" });
}
