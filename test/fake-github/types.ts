/**
 * The fake GitHub's control-API shapes, shared by the server (Node) and by tests (Node or
 * workerd). Type-only: no runtime code, so importing it never pulls in the server. Over the house's
 * ~400 lines on purpose: declarations only, one per control shape, read as the fake's contract.
 */

import type { components } from "@octokit/openapi-types";

export interface SeedApp {
  id: number;
  client_id?: string;
  /** SPKI PEM the fake verifies App JWTs with. */
  public_key: string;
}

export interface SeedInstallation {
  id: number;
  app_id: number;
  /** The org or user login the App is installed on. */
  account: string;
  /**
   * What its owner granted (GitHub's keys and levels: `administration: "write"`); absent: all that
   * Edgerunner needs (apps/rest.ts DEFAULT_INSTALLATION_PERMISSIONS).
   */
  permissions?: Record<string, string>;
  /** The events it is subscribed to; absent: ["workflow_job"]. */
  events?: string[];
}

/**
 * An installation as the world keeps it. Seeded ones carry only id, App and account (and cover
 * every repository of the account); the optional fields come from installing an App through the
 * fake's pages (apps/installations.ts).
 */
export interface FakeInstallation {
  id: number;
  appId: number;
  /** The org or user login, lower-cased. */
  account: string;
  repositorySelection?: "all" | "selected";
  /** With `selected`: the `owner/name` (lower-cased) it covers. */
  repositories?: string[];
  permissions?: Record<string, string>;
  events?: string[];
  createdAt?: number;
}

export interface SeedPat {
  token: string;
  login?: string;
  /** Lower-cased scope keys (`repos/o/r`, `orgs/o`, `enterprises/e`) it may act on; all when absent. */
  entities?: string[];
}

export interface SeedRunnerGroup {
  id: number;
  name: string;
  default?: boolean;
}

export interface SeedRunner {
  /** `repos/o/r`, `orgs/o` or `enterprises/e`. */
  scope: string;
  name: string;
  id?: number;
  os?: string;
  status?: "online" | "offline";
  busy?: boolean;
  labels?: string[];
  runner_group_id?: number;
  ephemeral?: boolean;
}

export interface SeedHook {
  /** `repos/o/r` or `orgs/o`. */
  scope: string;
  url: string;
  events?: string[];
  active?: boolean;
  content_type?: string;
  secret?: string;
  /** GitHub's record of its recent deliveries (GET …/hooks/{id}/deliveries). */
  deliveries?: SeedHookDelivery[];
}

/** A webhook delivery as GitHub lists it; `status_code` 0: GitHub got no answer. */
export interface SeedHookDelivery {
  status_code: number;
  /** GitHub's words for the outcome; defaults to "OK" for 2xx, else "Invalid HTTP Response: <code>". */
  status?: string;
  event?: string;
  action?: string | null;
  /** ISO time; defaults to the world's now. */
  delivered_at?: string;
}

/** A GitHub App's own webhook (GET /app/hook/config and /app/hook/deliveries). */
export interface SeedAppHook {
  app_id: number;
  url?: string;
  content_type?: string;
  insecure_ssl?: string;
  deliveries?: SeedHookDelivery[];
}

export interface SeedJob {
  id: number;
  /** `owner/repo`. */
  repository: string;
  run_id?: number;
  status?: "queued" | "in_progress" | "completed" | "waiting" | "requested" | "pending";
  conclusion?: string | null;
  name?: string;
  labels?: string[];
  runner_id?: number | null;
  runner_name?: string | null;
  workflow_name?: string;
  /** When it was queued, on the world's clock (ms); absent: now, or kept from the job it replaces. */
  queued_at?: number;
  /** Its run's attempt (1 unless re-run); absent: 1, or kept from the job it replaces. */
  run_attempt?: number;
  /** When it last changed, on the world's clock (ms): set by the world at every put, whatever the seed says. */
  updated_at?: number;
}

export interface Seed {
  apps?: SeedApp[];
  installations?: SeedInstallation[];
  pats?: SeedPat[];
  repos?: string[];
  orgs?: string[];
  enterprises?: string[];
  /** By scope key (`orgs/o`, `enterprises/e`); every org and enterprise has a Default group. */
  runner_groups?: Record<string, SeedRunnerGroup[]>;
  runners?: SeedRunner[];
  hooks?: SeedHook[];
  jobs?: SeedJob[];
  /** Apps' own webhooks (apps/reads.ts). */
  app_hooks?: SeedAppHook[];
  /** Enterprise slug → the logins of its organizations (an enterprise hook hears their repositories' events). */
  enterprise_orgs?: Record<string, string[]>;
}

/**
 * `forbidden`: 403 "Resource not accessible by integration" (what an installation token without the
 * permission gets). `session_conflict`: the Actions service answers 409
 * RunnerScaleSetSessionConflictException (any path it matches).
 */
export type FaultKind =
  | "rate_limit"
  | "server_error"
  | "busy_runner"
  | "duplicate_runner"
  | "latency"
  | "unauthorized"
  | "forbidden"
  | "session_conflict";

export interface Fault {
  kind: FaultKind;
  /** Only requests with this method (any when absent). */
  method?: string;
  /** Only requests whose path (without /api/v3 and query) contains this. */
  path?: string;
  /** How many matching requests it hits; -1 = until cleared. Default 1. */
  times?: number;
  /** Hit each matching request with this chance (0–1) only; with times -1, an error rate. */
  probability?: number;
  /** rate_limit: 403 (default) or 429; server_error: 500–599 (default 502). */
  status?: number;
  /** rate_limit: send `retry-after` with this many seconds (a secondary limit). */
  retry_after?: number;
  /** rate_limit without retry_after: primary limit exhausted, resets in this many seconds (default 60). */
  reset_in?: number;
  /** latency: delay before answering. */
  latency_ms?: number;
}

/**
 * Production-like behaviour of a world (PUT /_fake/profile; see profile.ts). Absent parts are off.
 */
export interface GithubProfile {
  /** Answer after ~this long: generate-jitconfig `jit_ms`, every other REST call `other_ms`, each ± `jitter` (a fraction, default 0.2). */
  latency?: { jit_ms: number; other_ms: number; jitter?: number };
  /**
   * GitHub's secondary limits, per credential (PAT, installation, App): at most `points_per_minute`
   * points in any 60 s (GET/HEAD/OPTIONS `read_points`, default 1; other methods
   * `mutation_points`, default 5) and `max_concurrent` requests under way; beyond them `status`
   * (403, default, or 429).
   */
  secondary?: { points_per_minute: number; max_concurrent: number; mutation_points?: number; read_points?: number; status?: number };
}

export interface RecordedRequest {
  /** When it was answered (after the profile's latency). */
  at: number;
  /** When it arrived: what GitHub's secondary limits count. */
  arrived_at: number;
  method: string;
  /** Path without the GHES /api/v3 prefix and without query. */
  path: string;
  query: Record<string, string>;
  ghes: boolean;
  auth: "none" | "invalid" | "pat" | "installation" | "app";
  /** PAT token's login, installation id, or app id. */
  principal: string | null;
  status: number;
  user_agent: string | null;
  api_version: string | null;
  body: unknown;
  /** Refused by the profile's secondary limits: which one. */
  secondary_limit?: "points" | "concurrency";
  /** The REST operation (world.ts route names, e.g. generate_jit_config); null when no route matched. */
  operation?: string | null;
}

/**
 * A runner as the world keeps it: GitHub's runner (its OpenAPI schema) with every field set but
 * the runner version (the fake's runners report none), and the scope it is registered at.
 */
export interface FakeRunner extends Required<Omit<components["schemas"]["runner"], "status" | "labels" | "version">> {
  status: "online" | "offline";
  labels: Required<components["schemas"]["runner-label"]>[];
  scope: string;
}

export interface FakeHook {
  id: number;
  scope: string;
  name: string;
  active: boolean;
  events: string[];
  config: { url: string; content_type: string; insecure_ssl: string; secret?: string };
  created_at: string;
  updated_at: string;
}

export interface WorldDump {
  now: number;
  runners: FakeRunner[];
  hooks: FakeHook[];
  installation_tokens: { installation_id: number; expires_at: string }[];
  registration_tokens: number;
  /** Every registration token issued, oldest first (so tests can see which one a runner used). */
  issued_registration_tokens: string[];
  faults: Fault[];
  /** Requests for runner downloads (GET /_fake/downloads/{filename}), oldest first. */
  download_requests: { filename: string; authorization: string | null; status: number }[];
  /** JIT files issued, by runner name: {".runner": base64, ".credentials": base64, ".credentials_rsaparams": base64}. */
  jit_configs: Record<string, Record<string, string>>;
}

/**
 * A runner package the world serves itself (POST /_fake/runner-downloads): listed by
 * `GET …/actions/runners/downloads` for its os/architecture, in place of the github.com link.
 */
export interface SeedRunnerDownload {
  os: string;
  architecture: string;
  filename: string;
  /** The package; absent: listed, but downloading it answers 404. */
  content_base64?: string;
  /** Defaults to the content's real SHA-256; set it to list a wrong one. null: not listed. */
  sha256_checksum?: string | null;
  /** Required as a bearer token to download; defaults to a random one. null: no token. */
  temp_download_token?: string | null;
}

export interface WorldInfo {
  id: string;
  /** api.github.com-style base URL of this world. */
  url: string;
  /** The same world as a GHES: `${url}/api/v3`. */
  ghes_url: string;
}

/** Where the world sends workflow_job webhooks (PUT /_fake/webhook-delivery). */
export interface DeliveryConfig {
  url: string;
  /** The entity's webhook secret (X-Hub-Signature-256), or with `app_id` the App's. */
  secret: string;
  /**
   * Deliver as this App's own webhook (app-webhook.ts): each delivery carries its installation,
   * and repositories no installation of the App covers get none. Recorded under the App
   * (GET /app/hook/deliveries).
   */
  app_id?: number;
  /**
   * `repos/o/r`, `orgs/o` or `enterprises/e`: the delivery is a hook of that entity in the world
   * (made, or the one there with the same URL), listed by GET …/hooks like one made through REST,
   * and hears only the jobs it covers (an enterprise: its organizations' repositories, see
   * Seed.enterprise_orgs). Without it (and without `app_id`): every job, under a hook no REST
   * listing shows.
   */
  scope?: string;
  /** Sent as X-GitHub-Enterprise-Host (the coordinator picks the endpoint by it). */
  enterprise_host?: string;
  /** Deliver every webhook twice (same delivery GUID; the second recorded as a redelivery). */
  duplicate?: boolean;
  /** Hold each delivery a random 0..shuffle_ms first, so they arrive out of order. */
  shuffle_ms?: number;
  /**
   * Play an operator pressing "Redeliver" on each failed delivery until a 2xx, a 4xx other than
   * 429, or 200 attempts (100 ms doubling to 2 s apart). Default false: GitHub never redelivers
   * by itself.
   */
  retry?: boolean;
  /** This share (0–1) of the deliveries is recorded failed at GitHub ("failed to connect to host") and never sent. Default 0. */
  drop_probability?: number;
  /** How long GitHub waits for the answer: 10 000 (github.com, the default); GHES waits 30 000. */
  timeout_ms?: number;
}

/** A job played by the world (POST /_fake/workflow-jobs), with its history. */
export interface WorkflowJob {
  id: number;
  run_id: number;
  repository: string;
  name: string;
  labels: string[];
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  runner_id: number | null;
  runner_name: string | null;
  /** The labels of the runner that took it, as they were then (an ephemeral runner is gone once done). */
  runner_labels: string[] | null;
  queued_at: number;
  in_progress_at: number | null;
  completed_at: number | null;
  /** How many times a runner reported it done (must end at exactly 1). */
  completions: number;
}

/** A workflow_job delivery to one hook, with every attempt at it (redeliveries included). */
export interface RecordedDelivery {
  guid: string;
  job_id: number;
  action: string;
  /** POSTs made: the delivery and its redeliveries (0 when dropped and never redelivered). */
  attempts: number;
  /** Last answer's status; 0 = no answer. */
  status: number | null;
  sent_at: number;
  /** When its last attempt finished. */
  acked_at: number | null;
  /** The hook it went through: a hook of the world (or the configured delivery's own), or an App's. */
  hook_id: number | null;
  app_id: number | null;
  /** Recorded failed by GitHub without being sent (DeliveryConfig.drop_probability). */
  dropped: boolean;
}

/** One delivery as GitHub records it (its OpenAPI schema `hook-delivery`), and the hook it belongs to. */
export interface HookDeliveryRecord {
  id: number;
  guid: string;
  delivered_at: string;
  redelivery: boolean;
  /** Seconds. */
  duration: number;
  /** "OK" for a 2xx; else why not ("Invalid HTTP Response: 503", "timed out", "failed to connect to host"). */
  status: string;
  /** 0: no answer. */
  status_code: number;
  event: string;
  action: string | null;
  installation_id: number | null;
  repository_id: number | null;
  throttled_at: string | null;
  url: string;
  request: { headers: Record<string, string>; payload: Record<string, unknown> | null };
  response: { headers: Record<string, string>; payload: string | null };
  hook_id: number | null;
  app_id: number | null;
}

/** The Actions service's knobs (PUT /_fake/actions/settings). */
export interface ActionsServiceSettings {
  /** How long an empty long poll waits before answering 202 (GitHub: ~50 s). */
  poll_wait_ms?: number;
  /** Lifetime of the admin JWT from the registration exchange. */
  admin_token_ttl_s?: number;
  /** Lifetime of a session's message queue token. */
  queue_token_ttl_s?: number;
}

/**
 * A message a test queues (POST /_fake/actions/scalesets/{id}/messages). `items`: job items as
 * they are, valid or not; `body`: the body string itself; `envelope`: fields over the
 * message's own (`{statistics: "x"}`); `text`: the whole answer, not JSON at all (so its id is
 * unreadable); `pad_bytes`: a `padding` field after the id, to make the answer that large.
 */
export interface InjectedMessage {
  items?: unknown[];
  body?: string;
  envelope?: Record<string, unknown>;
  text?: string;
  pad_bytes?: number;
}

/** A runner scale set as the Actions service answers it (`scope`: the entity it belongs to, never sent). */
export interface FakeScaleSet {
  id: number;
  name: string;
  runnerGroupId: number;
  runnerGroupName: string;
  labels: { name: string; type: string }[];
  RunnerSetting: { ephemeral: boolean; isElastic: boolean; disableUpdate: boolean };
  createdOn: string;
  scope: string;
}

export type ScaleSetJobState = "available" | "assigned" | "running" | "completed";

/** GET /_fake/actions/state. */
export interface ActionsServiceState {
  scale_sets: FakeScaleSet[];
  sessions: { session_id: string; scale_set_id: number; owner: string }[];
  /** Unacknowledged messages by scale set id, oldest first, with their items' types. */
  pending_messages: Record<string, { messageId: number; items: string[] }[]>;
  jobs: { job_id: number; runner_request_id: number; scale_set_id: number; state: ScaleSetJobState }[];
  /** Runners made by a scale set's generatejitconfig: runner id → scale set id. */
  agents: Record<string, number>;
  requests: { at: number; method: string; path: string; query: Record<string, string>; status: number; body: unknown }[];
  settings: Required<ActionsServiceSettings>;
}

/**
 * A GitHub App made through the manifest flow (apps/manifests.ts), as GET /_fake/apps lists it:
 * with its secrets, which tests need and GitHub hands out only once.
 */
export interface FakeManifestApp {
  id: number;
  slug: string;
  name: string;
  node_id: string;
  client_id: string;
  client_secret: string;
  /** null when the manifest's webhook is inactive. */
  webhook_secret: string | null;
  /** PKCS#1 PEM (BEGIN RSA PRIVATE KEY), as GitHub issues it. */
  pem: string;
  owner: { login: string; type: "User" | "Organization" };
  description: string | null;
  /** The manifest's `url` (GitHub's `external_url`). */
  url: string;
  hook: { url: string; active: boolean } | null;
  /** The App's webhook id (X-GitHub-Hook-ID of its deliveries). */
  hook_id: number;
  redirect_url: string | null;
  setup_url: string | null;
  setup_on_update: boolean;
  callback_urls: string[];
  public: boolean;
  permissions: Record<string, string>;
  events: string[];
  created_at: string;
}

/** An installation made through the fake's install page, as GET /_fake/apps lists it. */
export interface FakeAppInstallation {
  id: number;
  app_id: number;
  account: string;
  target_type: "User" | "Organization";
  repository_selection: "all" | "selected";
  /** The `owner/name` it covers: with `all`, the account's repositories in the world now. */
  repositories: string[];
  permissions: Record<string, string>;
  events: string[];
}

/** A delivery of an App's own webhook about its installations (installation, installation_repositories). */
export interface AppEventDelivery {
  guid: string;
  event: "installation" | "installation_repositories";
  action: string;
  app_id: number;
  installation_id: number;
  url: string;
  attempts: number;
  /** Last answer's status; 0 = no answer, null = not sent yet. */
  status: number | null;
  payload: unknown;
}

/** GET /_fake/apps. */
export interface FakeAppsState {
  /** The login the fake's web pages act as (PUT /_fake/web-user). */
  web_user: string;
  apps: FakeManifestApp[];
  installations: FakeAppInstallation[];
  deliveries: AppEventDelivery[];
}
