import type { ValidProviderInstance } from "../../src/providers/shim-protocol.ts";
import { LABEL_CONTROLLER, LABEL_POOL } from "./extra-specs.ts";
import type { HcloudApi, HcloudError } from "./hcloud-api.ts";

/**
 * Finding a pool's servers in the Hetzner project. Every lookup selects on the controller and
 * pool labels the shim puts on at creation, so a server without them (or of another pool or
 * coordinator) is never seen, let alone touched. Deleting servers count as gone.
 */

export interface PoolScope {
  controllerId: string;
  poolId: string;
}

/** The fields of Hetzner's Server the shim reads. */
export interface HcloudServer {
  id: number;
  name: string;
  status: string;
  labels: Record<string, string>;
  created: string;
  server_type?: { name?: string; architecture?: string };
  image?: { architecture?: string } | null;
  public_net?: { ipv4?: { ip?: string } | null; ipv6?: { ip?: string } | null };
  private_net?: { ip?: string }[];
}

/** Hetzner's maximum page (https://docs.hetzner.cloud/reference/cloud#pagination), and a bound on subrequests. */
export const PER_PAGE = 50;
export const MAX_PAGES = 20;

export type Found<T> = { ok: true; value: T } | { ok: false; error: HcloudError };

export const labelSelector = (scope: PoolScope) => `${LABEL_CONTROLLER}==${scope.controllerId},${LABEL_POOL}==${scope.poolId}`;

export const inPool = (s: HcloudServer, scope: PoolScope) =>
  s.labels?.[LABEL_CONTROLLER] === scope.controllerId && s.labels?.[LABEL_POOL] === scope.poolId;

const live = (s: HcloudServer) => s.status !== "deleting";

/** Every server matching the query, following meta.pagination.next_page. */
export async function listServers(api: HcloudApi, query: Record<string, string>): Promise<Found<HcloudServer[]>> {
  const out: HcloudServer[] = [];
  let page = 1;
  for (let i = 0; i < MAX_PAGES; i++) {
    const q = new URLSearchParams({ ...query, per_page: String(PER_PAGE), page: String(page) });
    const r = await api.call<{ servers: HcloudServer[]; meta?: { pagination?: { next_page?: number | null } } }>("GET", `/servers?${q}`);
    if (!r.ok) return r;
    out.push(...(r.body.servers ?? []));
    const next = r.body.meta?.pagination?.next_page;
    if (!next || next <= page) return { ok: true, value: out.filter(live) };
    page = next;
  }
  return { ok: false, error: { code: "too_many_pages", message: `more than ${MAX_PAGES * PER_PAGE} servers in one pool`, status: 0 } };
}

export const listPool = (api: HcloudApi, scope: PoolScope) => listServers(api, { label_selector: labelSelector(scope) });

/** The server of this name in the project, whoever's it is (names are unique per project). */
export async function serverByName(api: HcloudApi, name: string): Promise<Found<HcloudServer | null>> {
  const r = await listServers(api, { name });
  return r.ok ? { ok: true, value: r.value.find((s) => s.name === name) ?? null } : r;
}

/**
 * One server of the pool by provider id (Hetzner's numeric id) or server name (GARM's rule
 * for a create that failed before an id was known); null when the pool has none.
 */
export async function findServer(api: HcloudApi, scope: PoolScope, id: string): Promise<Found<HcloudServer | null>> {
  if (/^[1-9][0-9]{0,15}$/.test(id)) {
    const r = await api.call<{ server: HcloudServer }>("GET", `/servers/${id}`);
    if (!r.ok) return r.error.code === "not_found" ? { ok: true, value: null } : r;
    const s = r.body.server;
    return { ok: true, value: s && inPool(s, scope) && live(s) ? s : null };
  }
  const r = await listServers(api, { name: id, label_selector: labelSelector(scope) });
  return r.ok ? { ok: true, value: r.value[0] ?? null } : r;
}

/** Hetzner's architectures in the protocol's terms. */
export const HCLOUD_ARCH: Record<string, "amd64" | "arm64"> = { x86: "amd64", arm: "arm64" };
const RUNNING = new Set(["initializing", "starting", "running", "migrating", "rebuilding"]);
const STOPPED = new Set(["stopping", "off"]);

/** The server as the protocol reports it (GARM's ProviderInstance), always valid by GARM's rule. */
export function toProviderInstance(s: HcloudServer): ValidProviderInstance {
  const addresses: { address: string; type: "public" | "private" }[] = [];
  for (const p of s.private_net ?? []) if (p.ip) addresses.push({ address: p.ip, type: "private" });
  if (s.public_net?.ipv4?.ip) addresses.push({ address: s.public_net.ipv4.ip, type: "public" });
  const arch = s.server_type?.architecture ?? s.image?.architecture;
  return {
    provider_id: String(s.id),
    name: s.name,
    status: RUNNING.has(s.status) ? "running" : STOPPED.has(s.status) ? "stopped" : "unknown",
    os_type: "linux",
    ...(arch && HCLOUD_ARCH[arch] ? { os_arch: HCLOUD_ARCH[arch] } : {}),
    addresses,
  };
}
