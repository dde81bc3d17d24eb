// The fake Hetzner Cloud's data shapes, free of Node imports so workerd tests can use them too.
import type { ApiServerType } from "./server-types.ts";

/** A server as the fake keeps it; `toApiServer` (server.ts) turns it into the API's shape. */
export interface FakeServer {
  id: number;
  name: string;
  /** Hetzner's statuses: initializing | starting | running | stopping | off | deleting | … */
  status: string;
  server_type: string;
  location: string;
  image: string;
  labels: Record<string, string>;
  created: string;
  user_data?: string;
  ssh_keys: string[];
  firewalls: number[];
  networks: number[];
  placement_group: number | null;
  enable_ipv4: boolean;
  enable_ipv6: boolean;
  ipv4: string | null;
  /** Set once the server is deleted; deleted servers stay in the control API's list. */
  deleted?: boolean;
}

export interface RecordedHetznerRequest {
  at: number;
  method: string;
  /** Path under /v1 with the query string, e.g. /servers?label_selector=… */
  path: string;
  /** The JSON body, parsed, when there was one. */
  body: unknown;
  status: number;
  /** Hetzner's error code when the call failed. */
  error_code: string | null;
  /** The JSON body answered (a copy as sent; later changes to the server are not in it). */
  answer: unknown;
}

/** A create that fails with a Hetzner error (capacity, placement, limits) for a location and/or server type. */
export interface CreateFault {
  code: "resource_unavailable" | "placement_error" | "resource_limit_exceeded" | "unavailable" | string;
  location?: string;
  server_type?: string;
  /** How many matching creates fail; unlimited when absent. */
  times?: number;
  message?: string;
}

/** Any call answering a Hetzner error instead (permissions, outages). */
export interface CallFault {
  method?: string;
  /** Matches when the request path (under /v1, no query) starts with this. */
  path?: string;
  code: string;
  status?: number;
  message?: string;
  times?: number;
}

export interface HetznerFaults {
  create?: CreateFault[];
  calls?: CallFault[];
  /** The create action ends in error with this code instead of success (a server that could not be placed after all). */
  create_action_error?: { code: string; message?: string; times?: number };
  /** Milliseconds before answering, by method ("GET", "POST", "DELETE") or "*". */
  latency_ms?: Record<string, number>;
}

export interface HetznerProjectConfig {
  /** Most servers per page, whatever per_page asks (Hetzner's maximum is 50). */
  page_size?: number;
  /** initializing → running (the create action's success) after this long. */
  boot_delay_ms?: number;
  /** Shutdown/poweron/delete actions finish after this long. */
  stop_delay_ms?: number;
  /** RateLimit-Limit; the bucket refills `refill_per_second` requests a second (Hetzner: 3600/h, 1/s). */
  rate_limit?: number;
  refill_per_second?: number;
  /** Image names or ids that do not exist (invalid_input on create). */
  missing_images?: string[];
  /** Server type name → architecture (default: the server types table's, else x86). */
  architectures?: Record<string, "x86" | "arm">;
  /** The server types the project sees, replacing the fake's table (server-types.ts), e.g. other prices or deprecations. */
  server_types?: ApiServerType[];
  /** The token may only GET (token_readonly on anything else). */
  read_only?: boolean;
}

export interface HetznerProject {
  id: string;
  token: string;
}
