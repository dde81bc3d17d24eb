import {
  type BootstrapInstance,
  type FlavorCatalogue,
  SHIM_INTERFACE_VERSION,
  SHIM_INTERFACE_VERSION_BATCH,
  SHIM_INTERFACE_VERSION_FLAVORS,
  validateFlavorCatalogue,
} from "../../src/providers/shim-protocol.ts";

/**
 * Protocol v1.2 in the fake shim (and so in the simulator): a tenant's flavor catalogue, the
 * capabilities that follow from what the tenant offers, and the rules a shaped create meets.
 * Free of Node imports, like types.ts.
 *
 * Only a shaped create (one with `shape`) must name a catalogued flavor: a v1 scale set's flavor
 * is whatever its admin typed, and a tenant without a catalogue ignores `shape` as a GARM
 * provider would, so tenants made before v1.2 answer exactly as they did.
 */

/** What a tenant offers beyond protocol v1. */
export interface TenantOffer {
  /** The largest batch create (0: none). */
  batchCreateMax: number;
  /** The flavor catalogue (null: none, so `GET /v1/flavors` is 404). */
  flavors: FlavorCatalogue | null;
}

/** `GET /v1/capabilities`: v1, v1.1 with batch create, v1.2 with a flavor catalogue (with or without batch create). */
export function tenantCapabilities(t: TenantOffer): Record<string, unknown> {
  const batch = t.batchCreateMax ? { batch_create: { max: t.batchCreateMax } } : {};
  if (t.flavors)
    return { interface_version: SHIM_INTERFACE_VERSION_FLAVORS, async: true, idempotent_create: true, ...batch, flavors: true };
  return {
    interface_version: t.batchCreateMax ? SHIM_INTERFACE_VERSION_BATCH : SHIM_INTERFACE_VERSION,
    async: true,
    idempotent_create: true,
    ...batch,
  };
}

/**
 * Why this shaped create cannot be made from the catalogue, or null. What a cloud would refuse:
 * a size it does not sell, an image of another architecture, spot where the size has none, a
 * disk larger than the size's fixed one.
 */
export function shapedCreateProblem(catalogue: FlavorCatalogue | null, b: BootstrapInstance): string | null {
  if (!b.shape || !catalogue) return null;
  const f = catalogue.flavors.find((x) => x.name === b.flavor);
  if (!f) return `flavor ${JSON.stringify(b.flavor)} is not in this shim's flavor catalogue`;
  if (f.architecture !== b.arch) return `flavor ${f.name} is ${f.architecture}, and the create asks for ${b.arch}`;
  if (b.shape.spot && !f.spot) return `flavor ${f.name} is not offered on spot capacity`;
  if (b.shape.disk_gb !== null && f.disk_gb != null && b.shape.disk_gb > f.disk_gb)
    return `flavor ${f.name} comes with a ${f.disk_gb} GB disk, smaller than the ${b.shape.disk_gb} GB asked`;
  return null;
}

/**
 * A catalogue given on the control API (null removes it), held to the coordinator's rule so a
 * test cannot serve one it would refuse by accident; a test that means to serve a bad one gives
 * a `respond` fault rule on the `flavors` operation.
 */
export function readCatalogue(raw: unknown): { ok: true; value: FlavorCatalogue | null } | { ok: false; problems: string[] } {
  if (raw === null) return { ok: true, value: null };
  const v = validateFlavorCatalogue(raw);
  return v.ok ? { ok: true, value: v.value } : { ok: false, problems: v.problems };
}
