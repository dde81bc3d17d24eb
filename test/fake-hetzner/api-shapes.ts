import type { ApiServerType } from "./server-types.ts";
import type { FakeServer } from "./types.ts";

/**
 * How the fake Hetzner Cloud shows a server: every field Hetzner's Server schema requires
 * (test/fixtures/hetzner/cloud-openapi-trimmed.json), with plausible values for the ones the
 * fake does not model. Pure.
 */

export const LOCATIONS: Record<string, { id: number; city: string; country: string; network_zone: string }> = {
  fsn1: { id: 1, city: "Falkenstein", country: "DE", network_zone: "eu-central" },
  nbg1: { id: 2, city: "Nuremberg", country: "DE", network_zone: "eu-central" },
  hel1: { id: 3, city: "Helsinki", country: "FI", network_zone: "eu-central" },
  ash: { id: 4, city: "Ashburn, VA", country: "US", network_zone: "us-east" },
  hil: { id: 5, city: "Hillsboro, OR", country: "US", network_zone: "us-west" },
  sin: { id: 6, city: "Singapore", country: "SG", network_zone: "ap-southeast" },
};

/** `type`: the table's entry for the server's type (server-types.ts); a type the table lacks gets a stand-in. */
export function apiServer(s: FakeServer, arch: "x86" | "arm", type?: ApiServerType) {
  const loc = LOCATIONS[s.location]!;
  const location = {
    id: loc.id,
    name: s.location,
    description: `${loc.city} DC Park 1`,
    country: loc.country,
    city: loc.city,
    latitude: 50.47612,
    longitude: 12.370071,
    network_zone: loc.network_zone,
  };
  return {
    id: s.id,
    name: s.name,
    status: s.status,
    created: s.created,
    labels: s.labels,
    locked: false,
    backup_window: null,
    rescue_enabled: false,
    primary_disk_size: type?.disk ?? 40,
    included_traffic: 21990232555520,
    ingoing_traffic: 0,
    outgoing_traffic: 0,
    iso: null,
    image: {
      id: 114690387,
      name: s.image,
      type: "system",
      status: "available",
      description: s.image,
      os_flavor: "ubuntu",
      os_version: "24.04",
      architecture: arch,
      bound_to: null,
      created: "2024-04-25T12:00:00Z",
      created_from: null,
      deleted: null,
      deprecated: null,
      disk_size: 5,
      image_size: null,
      labels: {},
      protection: { delete: false },
      rapid_deploy: true,
    },
    location,
    datacenter: {
      id: loc.id,
      name: `${s.location}-dc14`,
      description: `${loc.city} 1 DC14`,
      location,
      server_types: { available: [22], available_for_migration: [22], supported: [22] },
    },
    server_type: type ?? {
      id: 22,
      name: s.server_type,
      description: s.server_type.toUpperCase(),
      cores: 2,
      memory: 4,
      disk: 40,
      deprecated: false,
      storage_type: "local",
      cpu_type: "shared",
      architecture: arch,
      prices: [],
      locations: [],
    },
    protection: { delete: false, rebuild: false },
    placement_group: null,
    private_net: s.networks.map((n, i) => ({
      network: n,
      ip: `10.0.0.${(s.id % 200) + 2 + i}`,
      alias_ips: [],
      mac_address: "86:00:00:2a:7d:e0",
    })),
    public_net: {
      ipv4: s.ipv4 ? { id: s.id, ip: s.ipv4, blocked: false, dns_ptr: `static.${s.ipv4}.clients.your-server.de` } : null,
      ipv6: s.enable_ipv6 ? { id: s.id + 1, ip: "2001:db8::/64", blocked: false, dns_ptr: [] } : null,
      floating_ips: [],
      firewalls: s.firewalls.map((id) => ({ id, status: "applied" })),
    },
    volumes: [],
    load_balancers: [],
  };
}
