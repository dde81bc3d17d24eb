/** Shapes shared by the fake Gitea's server and its control client (test/fake-gitea). */

/** Where a runner or hook lives: `repos/o/r`, `orgs/o` or `admin` (the whole instance). */
export type GiteaScopeKey = string;

export interface FakeGiteaRunner {
  id: number;
  uuid: string;
  /** The runner's secret for the runner.v1 calls (x-runner-token). */
  token: string;
  name: string;
  scope: GiteaScopeKey;
  labels: string[];
  ephemeral: boolean;
  busy: boolean;
  status: "offline" | "idle" | "active";
  /** The job it took, once it took one. */
  jobId: number | null;
}

export interface FakeGiteaHook {
  id: number;
  scope: GiteaScopeKey;
  type: string;
  active: boolean;
  events: string[];
  /** As sent, secret included (Gitea never shows it through its API; the fake's state does). */
  config: Record<string, string>;
  created_at: string;
  updated_at: string;
}

export type FakeJobStatus = "queued" | "in_progress" | "completed";

export interface FakeGiteaJob {
  id: number;
  run_id: number;
  repository: string;
  labels: string[];
  status: FakeJobStatus;
  conclusion: string;
  runner_id: number;
  runner_name: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
}

export interface RecordedGiteaDelivery {
  hook_id: number;
  url: string;
  /** The headers Gitea sends (services/webhook/deliver.go). */
  headers: Record<string, string>;
  body: string;
  job_id: number;
  action: FakeJobStatus;
  /** The coordinator's answer when the fake delivered it itself; null when only recorded. */
  status: number | null;
}

export interface GiteaSeed {
  repos?: string[];
  orgs?: string[];
  /** Access tokens; `admin` may use /admin routes. */
  tokens?: { token: string; login: string; admin?: boolean }[];
  runners?: { name: string; scope: GiteaScopeKey; labels?: string[]; busy?: boolean }[];
}

export interface GiteaFaults {
  /** What deleting a runner that does not exist answers (default 500, as Gitea 1.24 does). */
  missing_runner_status?: 404 | 500;
  /** The next n REST requests answer this status (e.g. 429 with Retry-After, 503). */
  next?: { status: number; count?: number; retry_after?: number } | null;
}

export interface GiteaSettings {
  /** Whether the fake POSTs deliveries to the hooks' URLs itself (standalone), or only records them (worker tests relay them). */
  deliver?: boolean;
  /** Whether a delivery that failed (no answer, 5xx, 429) is sent again, as an operator would redeliver it (e2e G: the coordinator is restarted mid-run). */
  redeliver?: boolean;
}

export interface GiteaWorldState {
  runners: FakeGiteaRunner[];
  hooks: FakeGiteaHook[];
  jobs: FakeGiteaJob[];
  deliveries: RecordedGiteaDelivery[];
  registration_tokens: Record<GiteaScopeKey, string>;
  requests: { method: string; path: string; scheme: string | null }[];
}
