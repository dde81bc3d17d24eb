/**
 * The fake GitHub playing workflows (Node only; the server attaches one player per world).
 *
 * A scenario queues jobs with labels; the player sends a signed `workflow_job` `queued` webhook
 * for each (GitHub's example payload, reshaped) to the configured webhook URL. Runners connect
 * with their JIT credentials (the `.runner` and `.credentials` files GitHub handed out) and ask
 * for work; like GitHub, the player gives the oldest queued job whose labels the runner has to
 * ANY online idle runner that asks, whoever it was created for, and sends `in_progress`, then
 * `completed` when the runner reports it done. An ephemeral runner is removed after its job.
 * Everything is recorded for invariant checks (GET /_fake/workflow-jobs, /_fake/webhook-deliveries).
 *
 * Besides the configured delivery (PUT /_fake/webhook-delivery), every App made through the
 * manifest flow whose active webhook subscribes `workflow_job` hears of the jobs its
 * installations cover, as on GitHub (see apps/registry.ts manifestAppHooks).
 */
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import type { ActionsService } from "./actions-service.ts";
import { appWebhookDelivery } from "./app-webhook.ts";
import { manifestAppHooks } from "./apps/registry.ts";
import { deliveryHeaders, postDelivery } from "./hook-delivery.ts";
import type { DeliveryConfig, RecordedDelivery, WorkflowJob } from "./types.ts";
import type { World } from "./world.ts";

const require = createRequire(import.meta.url);
const examples = (require("@octokit/webhooks-examples/api.github.com/index.json") as { name: string; examples: any[] }[]).find(
  (e) => e.name === "workflow_job",
)!.examples;
const template = (action: string) => structuredClone(examples.find((e) => e.action === action && e.workflow_job.status === action)!);

const lc = (s: string) => s.toLowerCase();
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class WorkflowPlayer {
  readonly jobs = new Map<number, WorkflowJob>();
  readonly deliveries: RecordedDelivery[] = [];
  delivery: DeliveryConfig | null = null;
  private nextJobId = 70_000_000;
  private inflight = new Set<Promise<void>>();

  private readonly world: World;
  private readonly actions: ActionsService | null;

  constructor(world: World, actions: ActionsService | null = null) {
    this.world = world;
    this.actions = actions;
  }

  configure(c: DeliveryConfig) {
    this.delivery = { duplicate: false, shuffle_ms: 0, retry: true, ...c };
  }

  /** Queues `count` jobs with `labels` in `repository`; sends their `queued` webhooks. */
  queue(req: { repository: string; labels: string[]; count?: number; name?: string }): WorkflowJob[] {
    const out: WorkflowJob[] = [];
    for (let i = 0; i < (req.count ?? 1); i++) {
      const id = this.nextJobId++;
      const job: WorkflowJob = {
        id,
        run_id: id * 10,
        repository: lc(req.repository),
        name: req.name ?? `build-${id}`,
        labels: req.labels,
        status: "queued",
        conclusion: null,
        runner_id: null,
        runner_name: null,
        queued_at: this.world.now(),
        in_progress_at: null,
        completed_at: null,
        completions: 0,
      };
      this.jobs.set(id, job);
      this.world.putJob({ id, repository: job.repository, run_id: job.run_id, name: job.name, labels: job.labels, status: "queued" });
      this.send(job, "queued");
      const set = this.actions?.scaleSetFor(job.repository, job.labels);
      if (set) this.actions!.jobQueued(set, job);
      out.push(job);
    }
    return out;
  }

  /** A runner comes online with its JIT files' identity; 401 unless they match what GitHub issued. */
  connect(b: { agent_id?: unknown; name?: unknown; client_id?: unknown; os?: unknown }): { status: number; body: unknown } {
    const runner = this.world.runners.get(Number(b.agent_id));
    const files = typeof b.name === "string" ? this.world.jitConfigs.get(b.name) : undefined;
    if (!runner || !files || runner.name !== b.name) return { status: 401, body: { message: "fake: unknown runner" } };
    const creds = JSON.parse(atob(files[".credentials"]!)) as { data: { clientId: string } };
    if (creds.data.clientId !== b.client_id) return { status: 401, body: { message: "fake: bad runner credentials" } };
    runner.status = "online";
    if (typeof b.os === "string") runner.os = b.os;
    return { status: 200, body: runner };
  }

  /** An online idle runner asks for work: the oldest queued job it can run, or nothing (204). */
  acquire(agentId: number): { status: number; body: unknown } {
    const runner = this.world.runners.get(agentId);
    if (runner?.status !== "online") return { status: 404, body: { message: "fake: runner is not online" } };
    if (runner.busy) return { status: 409, body: { message: "fake: runner is busy" } };
    const have = new Set(runner.labels.map((l) => lc(l.name)));
    const scopeRepo = runner.scope.startsWith("repos/") ? runner.scope.slice("repos/".length) : null;
    const job = [...this.jobs.values()].find(
      (j) =>
        j.status === "queued" &&
        (scopeRepo === null || j.repository === scopeRepo) &&
        j.labels.every((l) => have.has(lc(l))) &&
        (this.actions === null || this.actions.mayRun(j.id, runner.id)),
    );
    if (!job) return { status: 204, body: null };
    runner.busy = true;
    job.status = "in_progress";
    job.runner_id = runner.id;
    job.runner_name = runner.name;
    job.in_progress_at = this.world.now();
    this.world.putJob({ ...this.seedOf(job) });
    this.send(job, "in_progress");
    this.actions?.jobStarted(job.id, runner);
    return { status: 200, body: job };
  }

  /** The runner finished its job: `completed` goes out; an ephemeral runner is gone from GitHub. */
  complete(agentId: number, jobId: number, conclusion = "success"): { status: number; body: unknown } {
    const job = this.jobs.get(jobId);
    if (!job || job.runner_id !== agentId) return { status: 404, body: { message: "fake: not this runner's job" } };
    job.completions++;
    if (job.status === "completed") return { status: 409, body: { message: "fake: job already completed" } };
    job.status = "completed";
    job.conclusion = conclusion;
    job.completed_at = this.world.now();
    this.world.putJob(this.seedOf(job));
    const runner = this.world.runners.get(agentId);
    if (runner) this.actions?.jobCompleted(job.id, runner, conclusion);
    if (runner) {
      runner.busy = false;
      if (runner.ephemeral) this.world.runners.delete(agentId);
    }
    this.send(job, "completed");
    return { status: 200, body: job };
  }

  /** The runner's machine went away: it shows offline (a busy one leaves its job to time out, as on GitHub). */
  disconnect(agentId: number): { status: number; body: unknown } {
    const runner = this.world.runners.get(agentId);
    if (!runner) return { status: 404, body: { message: "fake: no such runner" } };
    runner.status = "offline";
    return { status: 204, body: null };
  }

  /** Resolves once every delivery in flight has finished (or given up). */
  async settle(): Promise<void> {
    while (this.inflight.size) await Promise.all([...this.inflight]);
  }

  private seedOf(j: WorkflowJob) {
    return {
      id: j.id,
      repository: j.repository,
      run_id: j.run_id,
      name: j.name,
      labels: j.labels,
      status: j.status,
      conclusion: j.conclusion,
      runner_id: j.runner_id,
      runner_name: j.runner_name,
    };
  }

  private payload(job: WorkflowJob, action: "queued" | "in_progress" | "completed") {
    const p = template(action);
    const [owner, name] = job.repository.split("/") as [string, string];
    p.repository.name = name;
    p.repository.full_name = job.repository;
    p.repository.owner.login = owner;
    delete p.organization;
    delete p.enterprise;
    delete p.installation;
    const started = job.in_progress_at ?? job.queued_at;
    Object.assign(p.workflow_job, {
      id: job.id,
      run_id: job.run_id,
      name: job.name,
      labels: job.labels,
      status: action,
      conclusion: action === "completed" ? job.conclusion : null,
      created_at: iso(job.queued_at),
      started_at: iso(started),
      completed_at: action === "completed" ? iso(job.completed_at!) : null,
      runner_id: action === "queued" ? null : job.runner_id,
      runner_name: action === "queued" ? null : job.runner_name,
      runner_group_id: action === "queued" ? null : 1,
      runner_group_name: action === "queued" ? null : "Default",
      workflow_name: "CI",
      head_branch: "main",
    });
    return p;
  }

  /** Where webhooks go: the configured delivery, and each manifest App's own hook (once per App). */
  private targets(): DeliveryConfig[] {
    const configured = this.delivery ? [this.delivery] : [];
    const apps = manifestAppHooks(this.world, "workflow_job").filter((h) => h.app_id !== this.delivery?.app_id);
    return [...configured, ...apps];
  }

  private send(job: WorkflowJob, action: "queued" | "in_progress" | "completed") {
    for (const d of this.targets()) {
      const app = d.app_id === undefined ? null : appWebhookDelivery(this.world, d.app_id, job.repository);
      if (d.app_id !== undefined && !app) continue; // no installation of the App covers this repository
      const body = JSON.stringify({ ...this.payload(job, action), ...(app && { installation: app.installation }) });
      const guid = randomUUID();
      const copies = d.duplicate ? 2 : 1;
      for (let copy = 0; copy < copies; copy++) {
        const p = this.deliver(d, body, guid, job.id, action, app?.headers).finally(() => this.inflight.delete(p));
        this.inflight.add(p);
      }
    }
  }

  private async deliver(
    d: DeliveryConfig,
    body: string,
    guid: string,
    jobId: number,
    action: string,
    extraHeaders: Record<string, string> = {},
  ) {
    if (d.shuffle_ms) await sleep(Math.random() * d.shuffle_ms);
    const record: RecordedDelivery = { guid, job_id: jobId, action, attempts: 0, status: null, sent_at: Date.now(), acked_at: null };
    this.deliveries.push(record);
    const headers = deliveryHeaders("workflow_job", guid, d.secret, body, {
      ...(d.enterprise_host ? { "x-github-enterprise-host": d.enterprise_host } : {}),
      ...extraHeaders,
    });
    await postDelivery(d.url, headers, body, d.retry !== false, record);
    record.acked_at = Date.now();
  }
}
