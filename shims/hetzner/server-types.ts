import type { HcloudApi } from "./hcloud-api.ts";
import { type Found, MAX_PAGES, PER_PAGE } from "./servers.ts";

/**
 * Hetzner Cloud's server types (`GET /v1/server_types`,
 * https://docs.hetzner.cloud/reference/cloud#server-types-list-server-types), read page by page
 * and kept per isolate for ten minutes: they change a few times a year, and the flavor catalogue
 * and every shaped create need them, so one Worker isolate asks Hetzner once, not once a request.
 */

export interface HcloudDeprecation {
  announced: string;
  unavailable_after: string;
}

/** The fields of Hetzner's ServerType the shim reads. */
export interface HcloudServerType {
  id: number;
  name: string;
  cores: number;
  /** GB, a float (0.5 for the smallest types Hetzner ever had). */
  memory: number;
  /** GB of the fixed local disk. */
  disk: number;
  architecture?: string;
  cpu_type?: string;
  deprecated?: boolean | null;
  deprecation?: HcloudDeprecation | null;
  /** Decimal strings in euros, one entry per location the type is sold in. */
  prices?: { location: string; price_hourly?: { net?: string; gross?: string } }[];
  /** Per-location deprecation, which Hetzner is moving to from the type-wide fields. */
  locations?: { name: string; deprecation?: HcloudDeprecation | null }[];
}

/** Every server type, following meta.pagination.next_page. */
export async function listServerTypes(api: HcloudApi): Promise<Found<HcloudServerType[]>> {
  const out: HcloudServerType[] = [];
  let page = 1;
  for (let i = 0; i < MAX_PAGES; i++) {
    const q = new URLSearchParams({ per_page: String(PER_PAGE), page: String(page) });
    const r = await api.call<{ server_types: HcloudServerType[]; meta?: { pagination?: { next_page?: number | null } } }>(
      "GET",
      `/server_types?${q}`,
    );
    if (!r.ok) return r;
    out.push(...(r.body.server_types ?? []));
    const next = r.body.meta?.pagination?.next_page;
    if (!next || next <= page) return { ok: true, value: out };
    page = next;
  }
  return { ok: false, error: { code: "too_many_pages", message: `more than ${MAX_PAGES * PER_PAGE} server types`, status: 0 } };
}

export const SERVER_TYPES_TTL_MS = 10 * 60_000;
// Tokens of several projects may reach one isolate (tests do): a small bound keeps the map from growing.
const MAX_KEYS = 16;

/**
 * Server types remembered per project (keyed by endpoint and token, since prices and
 * availability are the project's). A failed read is not remembered: the next request asks again.
 */
export class ServerTypeCache {
  private readonly kept = new Map<string, { at: number; types: HcloudServerType[] }>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  async get(key: string, load: () => Promise<Found<HcloudServerType[]>>): Promise<Found<HcloudServerType[]>> {
    const hit = this.kept.get(key);
    if (hit && this.now() - hit.at < SERVER_TYPES_TTL_MS) return { ok: true, value: hit.types };
    const r = await load();
    if (!r.ok) return r;
    this.kept.delete(key);
    if (this.kept.size >= MAX_KEYS) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(key, { at: this.now(), types: r.value });
    return r;
  }
}

/** The isolate's cache: module state lives as long as the Worker isolate does. */
export const serverTypeCache = new ServerTypeCache();
