// The fake shim's data shapes, free of Node imports so workerd tests can use them too.

/**
 * `create_batch` is the whole `POST /v1/instances:batch` request (latency, respond, hang, flood);
 * each instance in it meets the `create` rules and answers as a single create would.
 */
export const shimOperations = [
  "create",
  "create_batch",
  "get",
  "delete",
  "list",
  "start",
  "stop",
  "remove_all",
  "capabilities",
  "flavors",
] as const;
export type ShimOperation = (typeof shimOperations)[number];

/** What to do instead of the normal answer. */
export type FaultAction =
  /**
   * Answer this status and body (a string is sent raw: use it for garbage), with these extra
   * headers (a redirect's Location). `apply` performs the operation first.
   */
  | { type: "respond"; status: number; body?: unknown; headers?: Record<string, string>; apply?: boolean }
  /** Answer this status with `bytes` bytes of junk, streamed (for oversized answers). */
  | { type: "flood"; status: number; bytes: number }
  /** Create normally, but the machine comes up in this status (e.g. "error", as a cloud's failed boot). */
  | { type: "machine_status"; status: string }
  /** Never answer (the socket stays open until the client gives up). `apply` performs the operation first. */
  | { type: "hang"; apply?: boolean }
  /**
   * Answer 202 {operation_id}; the operation takes effect after `complete_after_ms` (create:
   * the machine appears; delete: it goes), unless `fail` is set. The callback then goes to the
   * tenant's callback_url ("deliver"), is kept for the test to replay ("outbox"), or is never sent ("never").
   */
  | {
      type: "async";
      complete_after_ms?: number;
      callback?: "deliver" | "outbox" | "never";
      callback_delay_ms?: number;
      fail?: { message: string; retryable: boolean };
      /** For create: report the machine with this status (e.g. "error"). */
      status?: string;
    };

export interface FaultRule {
  operation: ShimOperation;
  /** How many calls this rule answers; default 1 (unlimited when `probability` is set). */
  times?: number;
  /** Answer each matching call with this chance (0–1) instead of every call: error rates for chaos runs. */
  probability?: number;
  action: FaultAction;
}

export interface Faults {
  latency_ms?: Partial<Record<ShimOperation, number>>;
  rules?: FaultRule[];
}

export interface FakeMachine {
  provider_id: string;
  name: string;
  pool_id: string;
  status: string;
  os_type: string;
  os_arch: string;
  os_name: string;
  os_version: string;
  addresses: { address: string; type: "public" | "private" }[];
  created_at: number;
  /** The BootstrapInstance it was created from (absent for seeded orphans). */
  bootstrap?: unknown;
  /** What the create asked for (absent for seeded orphans); shape null: the create had none (not a shaped scale set's). */
  flavor?: string;
  image?: string;
  shape?: { disk_gb: number | null; spot: boolean } | null;
}

export interface RecordedRequest {
  at: number;
  operation: ShimOperation | "unknown";
  method: string;
  path: string;
  controller_id: string | null;
  pool_id: string | null;
  extra_specs: unknown;
  signature_ok: boolean;
  body: unknown;
  status: number | null;
  /** When the answer went out (absent: none yet). */
  answered_at?: number;
  /** A batch create's per-instance answers, in request order. */
  items?: { name: string; status: number }[];
}

export interface RecordedCallback {
  operation_id: string;
  instance_name: string;
  /** Absolute URL the callback is (or would be) POSTed to. */
  url: string;
  /** Request target, as signed. */
  path: string;
  headers: Record<string, string>;
  body: string;
  /** outbox: waiting for the test to take it; taken: handed to the test (see deliverOutbox). */
  state: "outbox" | "taken" | "delivered" | "failed";
  response_status: number | null;
  error?: string;
}
