// The fake Compute Engine's data shapes, free of Node imports so workerd tests can use them too.

/** A Compute Engine Instance resource as the fake keeps it: the inserted body plus what GCE fills in. */
export interface GceInstance {
  kind: "compute#instance";
  id: string;
  name: string;
  /** Full zone URL. */
  zone: string;
  machineType: string;
  /** PROVISIONING | STAGING | RUNNING | STOPPING | STOPPED | TERMINATED | SUSPENDED */
  status: string;
  creationTimestamp: string;
  selfLink: string;
  labels?: Record<string, string>;
  labelFingerprint?: string;
  tags?: { items?: string[]; fingerprint?: string };
  metadata?: { kind?: string; fingerprint?: string; items?: { key: string; value: string }[] };
  disks?: Record<string, unknown>[];
  networkInterfaces?: {
    network?: string;
    subnetwork?: string;
    networkIP?: string;
    name?: string;
    accessConfigs?: { type?: string; name?: string; natIP?: string; kind?: string }[];
  }[];
  scheduling?: {
    provisioningModel?: string;
    instanceTerminationAction?: string;
    preemptible?: boolean;
    automaticRestart?: boolean;
    onHostMaintenance?: string;
  };
  serviceAccounts?: { email: string; scopes: string[] }[];
  cpuPlatform?: string;
  [field: string]: unknown;
}

export interface RecordedGceRequest {
  at: number;
  /** The discovery document's method id, e.g. compute.instances.insert, or "oauth2.token". */
  method: string;
  http_method: string;
  /** Path after the host, query string included. */
  path: string;
  /** Parsed JSON body, when there was one. */
  body: unknown;
  status: number;
  /** The first error reason (HTTP) or, for an insert whose operation failed, the operation's error code. */
  error: string | null;
  zone: string | null;
  /** The IAM permissions the call needed (docs/gce-shim.md's role must hold them all). */
  permissions: string[];
}

/** An instances.insert that fails: on the operation (how capacity and quota errors arrive) or, with `http`, on the HTTP answer. */
export interface InsertFault {
  /** ZONE_RESOURCE_POOL_EXHAUSTED, QUOTA_EXCEEDED, … (operation error codes), or an HTTP reason with `http`. */
  code: string;
  zone?: string;
  /** SPOT or STANDARD. */
  provisioning_model?: "SPOT" | "STANDARD";
  machine_type?: string;
  /** HTTP status instead of a failed operation (e.g. 403 quotaExceeded). */
  http?: number;
  message?: string;
  /** How many matching inserts fail; unlimited when absent. */
  times?: number;
}

/** Any API method answering an HTTP error instead: throttling (403 rateLimitExceeded, 429), outages. */
export interface MethodFault {
  /** Discovery method id (compute.instances.insert, compute.zoneOperations.wait, oauth2.token, …); any when absent. */
  method?: string;
  status: number;
  reason: string;
  message?: string;
  times?: number;
  /** Answer each matching call with this chance (0–1). */
  probability?: number;
}

export interface GceFaults {
  insert?: InsertFault[];
  methods?: MethodFault[];
  /** Milliseconds before answering, per method id ("*" for all). */
  latency_ms?: Record<string, number>;
}

export interface GceProjectConfig {
  /** instances.list / aggregatedList return at most this many instances per page, whatever maxResults says. */
  page_size?: number;
  /** machineTypes.list returns at most this many types per page (default 5: every catalogue takes pages). */
  machine_types_page_size?: number;
  /** How long an operation stays RUNNING before DONE. */
  operation_ms?: number;
  /** PROVISIONING → RUNNING this long after the insert's operation is done. */
  boot_delay_ms?: number;
  /** STOPPING → STOPPED (stop) or gone (delete) after this long. */
  stop_delay_ms?: number;
  /** zoneOperations.wait returns after at most this long even when the operation is not DONE (GCE: about 2 minutes). */
  wait_cap_ms?: number;
  /** Access token lifetime in seconds (Google: 3600). */
  token_ttl_s?: number;
  zones?: string[];
  /** Image URLs or families that do not exist (404 on insert). */
  missing_images?: string[];
  /** IAM permissions the service account lacks (403 "Required '…' permission"). */
  denied_permissions?: string[];
}

/** A Google service account key file, as `gcloud iam service-accounts keys create` writes it. */
export interface ServiceAccountKey {
  type: "service_account";
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  token_uri: string;
}

export interface GceProject {
  id: string;
  service_account_key: ServiceAccountKey;
}
