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
 * Who hears of a job, as on GitHub: every active hook of the world subscribed to `workflow_job`
 * whose scope covers the job's repository (world-hooks.ts), every App made through the manifest
 * flow whose active webhook subscribes it and whose installations cover the repository
 * (apps/registry.ts manifestAppHooks), and the configured delivery (PUT /_fake/webhook-delivery):
 * with `scope` one of the world's hooks, with `app_id` that App's webhook, else a hook of its own
 * that hears every job. Each hears an event once; all its deliveries carry the event's GUID.
 * Each delivery is one attempt, recorded by GitHub (deliveries.ts); GitHub never sends a failed
 * one again by itself. The configured delivery's `retry` plays an operator who does.
 */
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import type { ActionsService } from "./actions-service.ts";
import { appWebhookDelivery } from "./app-webhook.ts";
import { manifestAppHooks, registryOf } from "./apps/registry.ts";
import { appKey, DEFAULT_TIMEOUT_MS, deliver, type HookKey, hookKey, redeliver, setTarget } from "./deliveries.ts";
import { deliveryBody, deliveryHeaders } from "./hook-delivery.ts";
import type { DeliveryConfig, HookDeliveryRecord, RecordedDelivery, WorkflowJob } from "./types.ts";
import type { World } from "./world.ts";
import { configuredHook, hookHeaders, hooksHearing, scopeProblem } from "./world-hooks.ts";

const require = createRequire(import.meta.url);
const examples = (require("@octokit/webhooks-examples/api.github.com/index.json") as { name: string; examples: any[] }[]).find(
  (e) => e.name === "workflow_job",
)!.examples;
const template = (action: string) => structuredClone(examples.find((e) => e.action === action && e.workflow_job.status === action)!);

const lc = (s: string) => s.toLowerCase();
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Unref'd: an operator still redelivering (to a receiver that went away) does not keep the process alive.
const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** What the configured delivery leaves out; every other hook delivers this way. */
const DEFAULTS = { duplicate: false, shuffle_ms: 0, retry: false, drop_probability: 0, timeout_ms: DEFAULT_TIMEOUT_MS };
type Options = typeof DEFAULTS;

/** One hook that hears of a job, and how it is delivered to. */
interface Target {
  key: HookKey;
  ref: { hook_id: number | null; app_id: number | null };
  url: string;
  secret: string | null;
  /** The hook's content type: json or form. */
  contentType: string;
  headers: Record<string, string>;
  installation: { id: number; node_id: string } | null;
  options: Options;
}

/** Where the operator stops pressing "Redeliver": a 2xx, or a refusal that will not change (4xx but 429). */
const final = (d: HookDeliveryRecord) =>
  (d.status_code >= 200 && d.status_code < 300) || (d.status_code >= 400 && d.status_code < 500 && d.status_code !== 429);

/**
 * An operator pressing "Redeliver" on a failed delivery (DeliveryConfig.retry), through the same
 * code as the REST attempts route, each attempt a recorded redelivery: 100 ms doubling to 2 s
 * apart, until a 2xx, a 4xx other than 429, or 200 attempts. GitHub never does this by itself.
 */
async function operatorRedelivers(w: World, first: HookDeliveryRecord) {
  const key = first.hook_id !== null ? hookKey(first.hook_id) : appKey(first.app_id!);
  let last = first;
  for (let delay = 100, attempts = 1; !final(last) && attempts < 200; delay = Math.min(delay * 2, 2000), attempts++) {
    await pause(delay);
    const again = redeliver(w, key, first.id);
    if (again.status !== 202) return;
    last = await again.done;
  }
}

export class WorkflowPlayer {
  readonly jobs = new Map<number, WorkflowJob>();
  readonly deliveries: RecordedDelivery[] = [];
  delivery: DeliveryConfig | null = null;
  /** The configured delivery's hook: one of the world's (with `scope`), or its own (neither scope nor App). */
  private configuredHookId: number | null = null;
  /** The hook an unscoped configured delivery goes through, which no REST listing shows. */
  private ownHookId: number | null = null;
  /** A hook of the world that the current configuration made (taken away when it changes). */
  private madeHookId: number | null = null;
  private nextJobId = 70_000_000;
  private inflight = new Set<Promise<void>>();

  private readonly world: World;
  private readonly actions: ActionsService | null;

  constructor(world: World, actions: ActionsService | null = null) {
    this.world = world;
    this.actions = actions;
  }

  /** Sets where workflow_job webhooks go (PUT /_fake/webhook-delivery); why not, or null. */
  configure(c: DeliveryConfig): string | null {
    const w = this.world;
    const scope = c.scope?.toLowerCase();
    if (scope !== undefined && c.app_id !== undefined)
      return "scope (a hook of an entity) and app_id (the App's webhook) exclude each other";
    const problem = scope === undefined ? null : scopeProblem(w, scope);
    if (problem) return problem;
    let hookId: number | null = null;
    let made: number | null = null;
    if (scope !== undefined) {
      const { hook, created } = configuredHook(w, scope, c.url, c.secret);
      hookId = hook.id;
      made = created || hook.id === this.madeHookId ? hook.id : null;
    } else if (c.app_id === undefined) {
      this.ownHookId ??= w.newId();
      hookId = this.ownHookId;
    }
    // A hook the previous configuration made is taken away with it.
    if (this.madeHookId !== null && this.madeHookId !== made) w.hooks.delete(this.madeHookId);
    this.madeHookId = made;
    this.configuredHookId = hookId;
    this.delivery = { ...DEFAULTS, ...c, ...(scope !== undefined && { scope }) };
    const timeout = this.delivery.timeout_ms ?? DEFAULT_TIMEOUT_MS;
    setTarget(w, c.app_id !== undefined ? appKey(c.app_id) : hookKey(hookId!), c.url, timeout);
    return null;
  }

  /** The configured delivery with its hook's id (null for an App's webhook: it is the App's). */
  configured() {
    return this.delivery && { ...this.delivery, hook_id: this.configuredHookId };
  }

  /**
   * Queues `count` jobs with `labels` in `repository`; sends their `queued` webhooks. Each job is
   * a run of its own unless `run_id` names one: a run's jobs share it, as a workflow's do, so a
   * label can carry the run id before the jobs exist (`${{ github.run_id }}` in runs-on).
   */
  queue(req: { repository: string; labels: string[]; count?: number; name?: string; run_id?: number }): WorkflowJob[] {
    const out: WorkflowJob[] = [];
    for (let i = 0; i < (req.count ?? 1); i++) {
      const id = this.nextJobId++;
      const job: WorkflowJob = {
        id,
        run_id: req.run_id ?? id * 10,
        repository: lc(req.repository),
        name: req.name ?? `build-${id}`,
        labels: req.labels,
        status: "queued",
        conclusion: null,
        runner_id: null,
        runner_name: null,
        runner_labels: null,
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
    job.runner_labels = runner.labels.map((l) => l.name);
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
    p.repository.id = registryOf(this.world).idOf(`repo:${job.repository}`);
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

  /** The hooks that hear of a job in `repository`, each once (see the file's header). */
  private targets(repository: string): Target[] {
    const w = this.world;
    const c = this.delivery;
    const options = (mine: boolean): Options =>
      mine && c
        ? {
            duplicate: c.duplicate ?? false,
            shuffle_ms: c.shuffle_ms ?? 0,
            retry: c.retry ?? false,
            drop_probability: c.drop_probability ?? 0,
            timeout_ms: c.timeout_ms ?? DEFAULT_TIMEOUT_MS,
          }
        : DEFAULTS;
    const host = (mine: boolean): Record<string, string> =>
      mine && c?.enterprise_host ? { "x-github-enterprise-host": c.enterprise_host } : {};
    const out: Target[] = hooksHearing(w, repository, "workflow_job").map((h) => {
      const mine = c?.scope !== undefined && h.id === this.configuredHookId;
      return {
        key: hookKey(h.id),
        ref: { hook_id: h.id, app_id: null },
        url: h.config.url,
        secret: h.config.secret ?? null,
        contentType: h.config.content_type,
        headers: { ...hookHeaders(w, h), ...host(mine) },
        installation: null,
        options: options(mine),
      };
    });
    if (c && c.scope === undefined && c.app_id === undefined) {
      out.push({
        key: hookKey(this.ownHookId!),
        ref: { hook_id: this.ownHookId, app_id: null },
        url: c.url,
        secret: c.secret,
        contentType: "json",
        headers: host(true),
        installation: null,
        options: options(true),
      });
    }
    const configuredApp = c?.app_id !== undefined ? [{ url: c.url, secret: c.secret, app_id: c.app_id }] : [];
    const apps = [...configuredApp, ...manifestAppHooks(w, "workflow_job").filter((h) => h.app_id !== c?.app_id)];
    for (const a of apps) {
      const app = appWebhookDelivery(w, a.app_id, repository);
      if (!app) continue; // no installation of the App covers this repository
      const mine = a.app_id === c?.app_id;
      if (!mine) setTarget(w, appKey(a.app_id), a.url);
      out.push({
        key: appKey(a.app_id),
        ref: { hook_id: null, app_id: a.app_id },
        url: a.url,
        secret: a.secret,
        contentType: "json",
        headers: { ...app.headers, ...host(mine) },
        installation: app.installation,
        options: options(mine),
      });
    }
    return out;
  }

  private send(job: WorkflowJob, action: "queued" | "in_progress" | "completed") {
    const payload = this.payload(job, action);
    // GitHub's GUID names the event: every hook's delivery of it carries the same one (its
    // OpenAPI description: "shared with all deliveries for all webhooks that subscribe to this event").
    const guid = randomUUID();
    for (const t of this.targets(job.repository)) {
      const text = JSON.stringify(t.installation ? { ...payload, installation: t.installation } : payload);
      for (let copy = 0; copy < (t.options.duplicate ? 2 : 1); copy++) {
        const p = this.deliver(t, text, guid, job.id, action, copy > 0).finally(() => this.inflight.delete(p));
        this.inflight.add(p);
      }
    }
  }

  private async deliver(t: Target, payload: string, guid: string, jobId: number, action: string, again: boolean) {
    if (t.options.shuffle_ms) await sleep(Math.random() * t.options.shuffle_ms);
    const record: RecordedDelivery = {
      guid,
      job_id: jobId,
      action,
      attempts: 0,
      status: null,
      sent_at: Date.now(),
      acked_at: null,
      ...t.ref,
      // Only GitHub's own deliveries are lost; a redelivery someone asks for is always sent.
      dropped: Math.random() < t.options.drop_probability,
    };
    this.deliveries.push(record);
    const { body, type } = deliveryBody(payload, t.contentType);
    const headers = deliveryHeaders("workflow_job", guid, t.secret, body, t.headers, type);
    const first = await deliver(this.world, {
      key: t.key,
      url: t.url,
      timeoutMs: t.options.timeout_ms,
      event: "workflow_job",
      guid,
      headers,
      body,
      payload,
      redelivery: again,
      dropped: record.dropped,
      tally: record,
    });
    if (t.options.retry) await operatorRedelivers(this.world, first);
  }
}
