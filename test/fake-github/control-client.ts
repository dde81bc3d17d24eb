/**
 * Drives the fake GitHub from tests (Node or workerd): make a world, seed it, inject faults,
 * read what the coordinator sent. Only fetch; never imports the server.
 */
import type {
  ActionsServiceSettings,
  ActionsServiceState,
  DeliveryConfig,
  FakeAppInstallation,
  FakeAppsState,
  FakeRunner,
  Fault,
  GithubProfile,
  HookDeliveryRecord,
  InjectedMessage,
  RecordedDelivery,
  RecordedRequest,
  Seed,
  SeedJob,
  SeedRunnerDownload,
  WorkflowJob,
  WorldDump,
  WorldInfo,
} from "./types";

async function expectOk(res: Response, what: string): Promise<Response> {
  if (!res.ok) throw new Error(`fake GitHub ${what}: ${res.status} ${await res.text()}`);
  return res;
}

export class FakeWorld {
  readonly info: WorldInfo;

  constructor(info: WorldInfo) {
    this.info = info;
  }

  get url() {
    return this.info.url;
  }
  get ghesUrl() {
    return this.info.ghes_url;
  }

  private async control(method: string, path: string, body?: unknown): Promise<Response> {
    const res = await fetch(`${this.info.url}/_fake/${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return expectOk(res, `${method} ${path}`);
  }

  async seed(seed: Seed) {
    await this.control("POST", "seed", seed);
  }
  async state(): Promise<WorldDump> {
    return (await this.control("GET", "state")).json();
  }
  /** REST requests received, oldest first. */
  async requests(): Promise<RecordedRequest[]> {
    return (await this.control("GET", "requests")).json();
  }
  async clearRequests() {
    await this.control("DELETE", "requests");
  }
  async fault(...faults: Fault[]) {
    await this.control("POST", "faults", faults);
  }
  async clearFaults() {
    await this.control("DELETE", "faults");
  }
  /** Latency and secondary limits (see GithubProfile); `{}` turns them off. */
  async setProfile(profile: GithubProfile) {
    await this.control("PUT", "profile", profile);
  }
  /** Sets the fake's clock; `freeze`: it stays at `now` (rather than running on with real time) until set again. */
  async setNow(now: number, opts: { freeze?: boolean } = {}) {
    await this.control("POST", "clock", { now, ...(opts.freeze && { freeze: true }) });
  }
  async updateRunner(id: number, patch: { busy?: boolean; status?: "online" | "offline" }): Promise<FakeRunner> {
    return (await this.control("PATCH", `runners/${id}`, patch)).json();
  }
  /** Serves a runner package from the world and lists it in its runner downloads; returns the listed entry. */
  async addRunnerDownload(
    d: SeedRunnerDownload,
  ): Promise<{ download_url: string; sha256_checksum?: string; temp_download_token?: string }> {
    return (await this.control("POST", "runner-downloads", d)).json();
  }
  async putJobs(...jobs: SeedJob[]) {
    await this.control("POST", "jobs", jobs);
  }

  // Playing workflows (see workflows.ts).
  /**
   * Where workflow_job webhooks go, signed with the entity's secret; the configuration as the
   * world keeps it, with its hook's id (null when it is an App's webhook).
   */
  async deliverWebhooksTo(c: DeliveryConfig): Promise<DeliveryConfig & { hook_id: number | null }> {
    return (await this.control("PUT", "webhook-delivery", c)).json();
  }
  /** Queues jobs (each its own run, or all of `run_id`); their `queued` webhooks are sent. */
  async queueJobs(q: { repository: string; labels: string[]; count?: number; name?: string; run_id?: number }): Promise<WorkflowJob[]> {
    return (await this.control("POST", "workflow-jobs", q)).json();
  }
  async workflowJobs(): Promise<WorkflowJob[]> {
    return (await this.control("GET", "workflow-jobs")).json();
  }
  async webhookDeliveries(): Promise<RecordedDelivery[]> {
    return (await this.control("GET", "webhook-deliveries")).json();
  }
  /** Waits until no webhook delivery is in flight (redeliveries included). */
  async settleDeliveries() {
    await this.control("POST", "workflow-settle");
  }

  // GitHub's record of webhook deliveries (see deliveries.ts).
  /** Every delivery GitHub recorded, in full and newest first: one hook's, one App's webhook's, or all. */
  async hookDeliveries(hook: { hook_id: number } | { app_id: number } | null = null): Promise<HookDeliveryRecord[]> {
    const q = hook === null ? "" : "hook_id" in hook ? `?hook_id=${hook.hook_id}` : `?app_id=${hook.app_id}`;
    return (await this.control("GET", `hook-deliveries${q}`)).json();
  }
  /** An operator presses "Redeliver" on a delivery: the new delivery, once it has its outcome (throws for an unknown or too old one). */
  async redeliver(deliveryId: number): Promise<HookDeliveryRecord> {
    return (await this.control("POST", `hook-deliveries/${deliveryId}/attempts`)).json();
  }

  // GitHub Apps made through the web pages (manifest flow; see apps/manifests.ts, apps/installations.ts).
  /** Apps made (with their secrets), their installations, and the App events delivered. */
  async apps(): Promise<FakeAppsState> {
    return (await this.control("GET", "apps")).json();
  }
  /** Who the web pages act as (the owner of user-owned Apps, the sender of App events); default octocat. */
  async setWebUser(login: string) {
    await this.control("PUT", "web-user", { login });
  }
  /** The user changes which repositories an installation covers; `installation_repositories` goes out. */
  async changeInstallationRepositories(id: number, change: { add?: string[]; remove?: string[] }): Promise<FakeAppInstallation> {
    return (await this.control("POST", `installations/${id}/repositories`, change)).json();
  }
  /** The user uninstalls the App; `installation` `deleted` goes out. */
  async uninstall(id: number) {
    await this.control("DELETE", `installations/${id}`);
  }

  // The Actions service (runner scale set API; see actions-service.ts).
  async actionsState(): Promise<ActionsServiceState> {
    return (await this.control("GET", "actions/state")).json();
  }
  async actionsSettings(s: ActionsServiceSettings): Promise<Required<ActionsServiceSettings>> {
    return (await this.control("PUT", "actions/settings", s)).json();
  }
  /** Every admin and/or queue token issued so far answers 401 from now on. */
  async expireActionsTokens(which: { admin?: boolean; queue?: boolean }) {
    await this.control("POST", "actions/expire-tokens", which);
  }
  /** GitHub deletes the runner scale set (as it does after days without a listener). */
  async deleteRunnerScaleSet(id: number) {
    await this.control("DELETE", `actions/scalesets/${id}`);
  }
  /** Queues a message of any shape on the runner scale set's queue (InjectedMessage); its id. */
  async injectMessage(scaleSetId: number, m: InjectedMessage): Promise<number> {
    const res = await this.control("POST", `actions/scalesets/${scaleSetId}/messages`, m);
    if (res.status !== 201) throw new Error(`inject message: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { message_id: number }).message_id;
  }
}

/**
 * The runner side of a world, as a runner holding JIT files speaks to it (serverUrl in `.runner`).
 * Answers are returned, not thrown: a runner expects refusals.
 */
export function runnerSession(serverUrl: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${serverUrl}/_fake/runner-sessions${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  return {
    connect: (r: { agent_id: number; name: string; client_id: string; os?: string }) => call("POST", "", r),
    acquire: (agentId: number) => call("POST", `/${agentId}/acquire`),
    complete: (agentId: number, jobId: number, conclusion = "success") =>
      call("POST", `/${agentId}/complete`, { job_id: jobId, conclusion }),
    disconnect: (agentId: number) => call("DELETE", `/${agentId}`),
  };
}

/** A fresh, empty world on the fake GitHub at `serverUrl`. */
export async function createWorld(serverUrl: string): Promise<FakeWorld> {
  const res = await expectOk(await fetch(`${serverUrl}/_fake/worlds`, { method: "POST" }), "create world");
  return new FakeWorld((await res.json()) as WorldInfo);
}
