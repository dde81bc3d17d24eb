import { Flavor, type FlavorCatalogue } from "../../src/providers/shim-protocol.ts";
import type { HcloudServerType } from "./server-types.ts";
import { HCLOUD_ARCH } from "./servers.ts";

/**
 * Hetzner's server types as the protocol's flavor catalogue (v1.2), for one location: the
 * location decides which types can be had and what they cost. Pure.
 */

/** Hetzner publishes its prices in euros, whatever the project. */
export const HETZNER_CURRENCY = "EUR";

/** The series a server type belongs to, the letters of its name: cx22 → cx, cax21 → cax, ccx13 → ccx. */
export const serverTypeFamily = (name: string): string => /^[a-z]+/.exec(name)?.[0] ?? name;

/** Whether the type may no longer be ordered, or soon may not, in `location` (type-wide or for that location). */
export function deprecatedIn(t: HcloudServerType, location: string): boolean {
  if (t.deprecated === true || t.deprecation) return true;
  return Boolean(t.locations?.find((l) => l.name === location)?.deprecation);
}

/** The type's hourly net price in `location`; undefined when it is not sold there, null when the price is unreadable. */
export function hourlyPriceIn(t: HcloudServerType, location: string): number | null | undefined {
  const price = t.prices?.find((p) => p.location === location);
  if (!price) return undefined;
  // A locations list that leaves the location out is Hetzner saying it is not sold there any more.
  if (t.locations && !t.locations.some((l) => l.name === location)) return undefined;
  const net = Number(price.price_hourly?.net);
  return price.price_hourly?.net !== undefined && Number.isFinite(net) && net >= 0 ? net : null;
}

/** The type as a flavor of `location`, or null when it cannot be had there or does not fit the protocol's Flavor. */
export function flavorOf(t: HcloudServerType, location: string): Flavor | null {
  if (deprecatedIn(t, location)) return null;
  const price = hourlyPriceIn(t, location);
  const architecture = t.architecture ? HCLOUD_ARCH[t.architecture] : undefined;
  if (price === undefined || !architecture) return null;
  const parsed = Flavor.safeParse({
    name: t.name,
    vcpus: t.cores,
    memory_mib: Math.round(t.memory * 1024),
    architecture,
    family: serverTypeFamily(t.name),
    gpu: null,
    disk_gb: t.disk,
    price_per_hour: price,
    // Hetzner Cloud has no spot or preemptible servers.
    spot: false,
  });
  return parsed.success ? parsed.data : null;
}

/**
 * The catalogue of `location`. A type that cannot be a valid flavor is left out rather than
 * sent: the coordinator refuses a whole catalogue for one bad entry. `left_out` counts them
 * (deprecated, not sold there, or unreadable) for the request's log line.
 */
export function catalogueFor(types: HcloudServerType[], location: string): { catalogue: FlavorCatalogue; left_out: number } {
  const seen = new Set<string>();
  const flavors: Flavor[] = [];
  for (const t of types) {
    const f = flavorOf(t, location);
    if (!f || seen.has(f.name)) continue;
    seen.add(f.name);
    flavors.push(f);
  }
  return { catalogue: { flavors, currency: HETZNER_CURRENCY }, left_out: types.length - flavors.length };
}
