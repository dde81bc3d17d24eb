// The fake Hetzner Cloud's server types, plain data free of Node imports: the fake serves them at
// GET /v1/server_types, and coordinator tests import them to build catalogues from the same table.
import { LOCATIONS } from "./api-shapes.ts";

/** A server type exactly as Hetzner's API shows it (every field its ServerType schema has). */
export interface ApiServerType {
  id: number;
  name: string;
  description: string;
  cores: number;
  /** GB. */
  memory: number;
  /** GB of local disk, fixed per type. */
  disk: number;
  deprecated: boolean;
  deprecation: { announced: string; unavailable_after: string } | null;
  prices: {
    location: string;
    price_hourly: { net: string; gross: string };
    price_monthly: { net: string; gross: string };
    included_traffic: number;
    price_per_tb_traffic: { net: string; gross: string };
  }[];
  storage_type: "local" | "network";
  cpu_type: "shared" | "dedicated";
  architecture: "x86" | "arm";
  locations: { id: number; name: string; deprecation: { announced: string; unavailable_after: string } | null }[];
}

const EU = ["fsn1", "nbg1", "hel1"];
const US = ["ash", "hil"];
const TB = 1024 ** 4;

/** Hetzner's decimal strings: net and gross (19 % German VAT), ten places. */
const amount = (net: number) => ({ net: net.toFixed(10), gross: (net * 1.19).toFixed(10) });

/**
 * One row of the table. Prices are in euros, near Hetzner's list prices (net, per month; the
 * hourly price about a 630th of it, close to Hetzner's own ratio); the US locations cost more
 * and include 1 TB of traffic instead of 20.
 */
function serverType(
  id: number,
  name: string,
  [cores, memory, disk]: [number, number, number],
  o: { cpu: "shared" | "dedicated"; arch: "x86" | "arm"; monthly: number; us?: number; deprecated?: boolean },
): ApiServerType {
  const sold = [...EU.map((l) => [l, o.monthly] as const), ...(o.us ? US.map((l) => [l, o.us!] as const) : [])];
  const deprecation = o.deprecated ? { announced: "2024-06-06T06:00:00Z", unavailable_after: "2024-09-06T06:00:00Z" } : null;
  return {
    id,
    name,
    description: name.toUpperCase(),
    cores,
    memory,
    disk,
    deprecated: Boolean(o.deprecated),
    deprecation,
    prices: sold.map(([location, monthly]) => ({
      location,
      price_hourly: amount(Math.round((monthly / 630) * 10_000) / 10_000),
      price_monthly: amount(monthly),
      included_traffic: US.includes(location) ? TB : 20 * TB,
      price_per_tb_traffic: amount(1),
    })),
    storage_type: "local",
    cpu_type: o.cpu,
    architecture: o.arch,
    locations: sold.map(([location]) => ({ id: LOCATIONS[location]!.id, name: location, deprecation })),
  };
}

const shared = (monthly: number, us?: number) => ({ cpu: "shared" as const, arch: "x86" as const, monthly, us });
const arm = (monthly: number) => ({ cpu: "shared" as const, arch: "arm" as const, monthly });
const dedicated = (monthly: number, us: number) => ({ cpu: "dedicated" as const, arch: "x86" as const, monthly, us });

/**
 * Hetzner Cloud's server types as of 2024/2025 (cores, memory GB, disk GB), by id. CX (Intel)
 * and CAX (Ampere Arm) are sold in the EU only; CPX (AMD) and CCX (dedicated AMD) in the US too.
 * cx11 is deprecated, as Hetzner deprecated the first CX generation in 2024.
 */
export const FAKE_SERVER_TYPES: readonly ApiServerType[] = [
  serverType(1, "cx11", [1, 2, 20], { ...shared(3.29), deprecated: true }),
  serverType(22, "cpx11", [2, 2, 40], shared(4.35, 5.18)),
  serverType(23, "cpx21", [3, 4, 80], shared(7.55, 9.42)),
  serverType(24, "cpx31", [4, 8, 160], shared(13.6, 16.9)),
  serverType(45, "cax11", [2, 4, 40], arm(3.79)),
  serverType(93, "cax21", [4, 8, 80], arm(6.49)),
  serverType(94, "cax31", [8, 16, 160], arm(12.49)),
  serverType(95, "cax41", [16, 32, 320], arm(24.49)),
  serverType(96, "ccx13", [2, 8, 80], dedicated(12.49, 14.09)),
  serverType(97, "ccx23", [4, 16, 160], dedicated(24.49, 27.99)),
  serverType(98, "ccx33", [8, 32, 240], dedicated(48.49, 55.49)),
  serverType(104, "cx22", [2, 4, 40], shared(3.79)),
  serverType(105, "cx32", [4, 8, 80], shared(6.8)),
  serverType(106, "cx42", [8, 16, 160], shared(16.4)),
  serverType(107, "cx52", [16, 32, 320], shared(32.4)),
];

/** The fake's table entry for a server type, if it has one. */
export const fakeServerType = (name: string, table: readonly ApiServerType[] = FAKE_SERVER_TYPES) => table.find((t) => t.name === name);
