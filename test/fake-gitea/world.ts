import { createHmac, randomUUID } from "node:crypto";
import { giteaWorkflowJobPayload } from "../fixtures/gitea/workflow-job-payload.ts";
import type {
  FakeGiteaHook,
  FakeGiteaJob,
  FakeGiteaRunner,
  FakeJobStatus,
  GiteaFaults,
  GiteaScopeKey,
  GiteaSeed,
  GiteaSettings,
  GiteaWorldState,
  RecordedGiteaDelivery,
} from "./types.ts";

/**
 * One fake Gitea instance's state and rules: repositories and organizations, access tokens,
 * runner registration tokens per scope, runners (registered by a simulated act_runner through
 * runner.v1), hooks, jobs, and the workflow_job deliveries Gitea makes when a job changes state.
 */
export class GiteaWorld {
  readonly repos = new Set<string>();
  readonly orgs = new Set<string>();
  readonly tokens = new Map<string, { login: string; admin: boolean }>();
  readonly runners = new Map<number, FakeGiteaRunner>();
  readonly hooks = new Map<number, FakeGiteaHook>();
  readonly jobs = new Map<number, FakeGiteaJob>();
  readonly deliveries: RecordedGiteaDelivery[] = [];
  readonly registrationTokens = new Map<GiteaScopeKey, string>();
  /** REST requests, with the Authorization scheme they came with (token, bearer, or null: none). */
  readonly requests: { method: string; path: string; scheme: string | null }[] = [];
  faults: GiteaFaults = {};
  settings: GiteaSettings = { deliver: false };
  private nextId = 1;
  private inFlight = new Set<Promise<void>>();

  /** What the payloads' URLs name (the fake's host and port). */
  readonly host: string;
  /** When the instance was made: when its repositories were created (and last updated, until a job is queued in one). */
  readonly createdAt = new Date().toISOString();

  constructor(host: string) {
    this.host = host;
  }

  seed(s: GiteaSeed): void {
    for (const r of s.repos ?? []) {
      this.repos.add(r);
      this.orgs.add(r.split("/")[0]!);
    }
    for (const o of s.orgs ?? []) this.orgs.add(o);
    for (const t of s.tokens ?? []) this.tokens.set(t.token, { login: t.login, admin: t.admin ?? false });
    for (const r of s.runners ?? []) this.addRunner(r.name, r.scope, r.labels ?? [], false, r.busy ?? false);
  }

  /** Whether the scope exists (a repository or organization the instance has; `admin` always). */
  scopeExists(scope: GiteaScopeKey): boolean {
    if (scope === "admin") return true;
    if (scope.startsWith("repos/")) return this.repos.has(scope.slice("repos/".length));
    if (scope.startsWith("orgs/")) return this.orgs.has(scope.slice("orgs/".length));
    return false;
  }

  /** Gitea hands out the scope's current token until it is used up or reset; ours stays until a runner registers. */
  registrationToken(scope: GiteaScopeKey): string {
    let t = this.registrationTokens.get(scope);
    if (!t) {
      t = randomUUID().replace(/-/g, "").slice(0, 40);
      this.registrationTokens.set(scope, t);
    }
    return t;
  }

  private addRunner(name: string, scope: GiteaScopeKey, labels: string[], ephemeral: boolean, busy = false): FakeGiteaRunner {
    const runner: FakeGiteaRunner = {
      id: this.nextId++,
      uuid: randomUUID(),
      token: randomUUID().replace(/-/g, ""),
      name,
      scope,
      labels,
      ephemeral,
      busy,
      status: busy ? "active" : "idle",
      jobId: null,
    };
    this.runners.set(runner.id, runner);
    return runner;
  }

  /** runner.v1 Register: the registration token names the scope the runner joins. */
  register(input: { token: string; name: string; labels: string[]; ephemeral: boolean }): FakeGiteaRunner | null {
    const scope = [...this.registrationTokens].find(([, t]) => t === input.token)?.[0];
    if (!scope) return null;
    return this.addRunner(input.name, scope, input.labels, input.ephemeral);
  }

  runnerByCredentials(uuid: string | undefined, token: string | undefined): FakeGiteaRunner | null {
    for (const r of this.runners.values()) if (r.uuid === uuid && r.token === token) return r;
    return null;
  }

  /** The runners a scope's API lists: its own; the instance's admin API lists every runner. */
  runnersOf(scope: GiteaScopeKey): FakeGiteaRunner[] {
    return [...this.runners.values()].filter((r) => scope === "admin" || r.scope === scope).sort((a, b) => a.id - b.id);
  }

  /** Whether a runner registered at `scope` may run a job of `repository`. */
  private reaches(scope: GiteaScopeKey, repository: string): boolean {
    return scope === "admin" || scope === `repos/${repository}` || scope === `orgs/${repository.split("/")[0]}`;
  }

  queueJob(repository: string, labels: string[]): FakeGiteaJob {
    const job: FakeGiteaJob = {
      id: this.nextId++,
      run_id: this.nextId++,
      repository,
      labels,
      status: "queued",
      conclusion: "",
      runner_id: 0,
      runner_name: "",
      created_at: new Date().toISOString(),
      started_at: null,
      completed_at: null,
    };
    this.jobs.set(job.id, job);
    this.deliver(job, "queued");
    return job;
  }

  /** runner.v1 FetchTask: the oldest queued job the runner's labels cover, in its reach. An ephemeral runner takes one job only. */
  fetchTask(runner: FakeGiteaRunner): FakeGiteaJob | null {
    if (runner.busy || (runner.ephemeral && runner.jobId !== null)) return null;
    const job = [...this.jobs.values()]
      .filter((j) => j.status === "queued" && this.reaches(runner.scope, j.repository) && j.labels.every((l) => runner.labels.includes(l)))
      .sort((a, b) => a.id - b.id)[0];
    if (!job) return null;
    job.status = "in_progress";
    job.runner_id = runner.id;
    job.runner_name = runner.name;
    job.started_at = new Date().toISOString();
    runner.busy = true;
    runner.status = "active";
    runner.jobId = job.id;
    this.deliver(job, "in_progress");
    return job;
  }

  /** runner.v1 UpdateTask with a result: the job is done; an ephemeral runner is removed, as Gitea does. */
  finishTask(runner: FakeGiteaRunner, jobId: number, conclusion: string): FakeGiteaJob | null {
    const job = this.jobs.get(jobId);
    if (!job || job.runner_id !== runner.id) return null;
    if (job.status !== "completed") {
      job.status = "completed";
      job.conclusion = conclusion;
      job.completed_at = new Date().toISOString();
      this.deliver(job, "completed");
    }
    runner.busy = false;
    runner.status = "idle";
    if (runner.ephemeral) this.runners.delete(runner.id);
    return job;
  }

  addHook(
    scope: GiteaScopeKey,
    body: { type?: string; config?: Record<string, string>; events?: string[]; active?: boolean },
  ): FakeGiteaHook {
    const now = new Date().toISOString();
    const hook: FakeGiteaHook = {
      id: this.nextId++,
      scope,
      type: body.type ?? "gitea",
      active: body.active ?? false,
      events: body.events ?? [],
      config: { ...(body.config ?? {}) },
      created_at: now,
      updated_at: now,
    };
    this.hooks.set(hook.id, hook);
    return hook;
  }

  /** The hooks that hear about a repository's jobs: its own, its owner's, and system hooks. */
  private hooksFor(repository: string): FakeGiteaHook[] {
    return [...this.hooks.values()].filter(
      (h) => h.active && h.events.includes("workflow_job") && this.reaches(h.scope, repository) && h.config.url,
    );
  }

  private deliver(job: FakeGiteaJob, action: FakeJobStatus): void {
    const [owner, repo] = job.repository.split("/") as [string, string];
    for (const hook of this.hooksFor(job.repository)) {
      const body = JSON.stringify(
        giteaWorkflowJobPayload({
          action,
          host: this.host,
          owner,
          repo,
          jobId: job.id,
          runId: job.run_id,
          labels: job.labels,
          runnerId: job.runner_id,
          runnerName: job.runner_name,
          conclusion: job.conclusion,
          createdAt: job.created_at,
        }),
      );
      const signature = hook.config.secret ? createHmac("sha256", hook.config.secret).update(body).digest("hex") : "";
      const id = randomUUID();
      const target = hook.scope === "admin" ? "system" : hook.scope.startsWith("orgs/") ? "organization" : "repository";
      const headers: Record<string, string> = {
        "content-type": "application/json",
        "x-gitea-delivery": id,
        "x-gitea-event": "workflow_job",
        "x-gitea-event-type": "workflow_job",
        "x-gitea-signature": signature,
        "x-gitea-hook-installation-target-type": target,
        "x-gogs-delivery": id,
        "x-gogs-event": "workflow_job",
        "x-gogs-signature": signature,
        "x-github-delivery": id,
        "x-github-event": "workflow_job",
        "x-hub-signature-256": `sha256=${signature}`,
      };
      const record: RecordedGiteaDelivery = {
        hook_id: hook.id,
        url: hook.config.url!,
        headers,
        body,
        job_id: job.id,
        action,
        status: null,
      };
      this.deliveries.push(record);
      if (this.settings.deliver) {
        const p = this.post(record, headers, body);
        this.inFlight.add(p);
        void p.finally(() => this.inFlight.delete(p));
      }
    }
  }

  /**
   * One delivery, answered or not (status 0). Gitea does not send a failed delivery again by
   * itself; with `redeliver` the fake plays the operator pressing "Redeliver" in the hook's
   * settings until a 2xx, a refusal (4xx but 429) or 200 attempts, 100 ms doubling to 2 s apart.
   */
  private async post(record: RecordedGiteaDelivery, headers: Record<string, string>, body: string): Promise<void> {
    for (let attempt = 1, delay = 100; ; attempt++, delay = Math.min(delay * 2, 2000)) {
      try {
        const res = await fetch(record.url, { method: "POST", headers, body });
        record.status = res.status;
        await res.arrayBuffer();
        if (res.ok || (res.status >= 400 && res.status < 500 && res.status !== 429)) return;
      } catch {
        record.status = 0;
      }
      if (!this.settings.redeliver || attempt >= 200) return;
      await new Promise<void>((r) => setTimeout(r, delay).unref());
    }
  }

  /** Waits until every delivery the fake made itself has been answered. */
  async settle(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  state(): GiteaWorldState {
    return {
      runners: [...this.runners.values()],
      hooks: [...this.hooks.values()],
      jobs: [...this.jobs.values()],
      deliveries: this.deliveries,
      registration_tokens: Object.fromEntries(this.registrationTokens),
      requests: this.requests,
    };
  }
}
