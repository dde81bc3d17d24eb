/**
 * One fake Forgejo's state: access tokens, jobs (with their per-attempt handles), runners, and
 * what the runner side does with them. Shapes are Forgejo's (modules/structs ActionRunJob,
 * ActionRunner, RegisterRunnerResponse; see test/fixtures/forgejo-swagger-runners.json).
 */
import { randomBytes, randomUUID } from "node:crypto";

export type Scope = { kind: "repository"; owner: string; repo: string } | { kind: "organization"; org: string } | { kind: "instance" };

export type JobStatus = "waiting" | "running" | "success" | "failure" | "cancelled";

export interface FakeJob {
  id: number;
  run_id: number;
  attempt: number;
  handle: string;
  repo_id: number;
  owner_id: number;
  name: string;
  runs_on: string[];
  task_id: number;
  status: JobStatus;
  owner: string;
  repo: string;
  /** The runner that took it, and its name (kept after Forgejo removes an ephemeral runner). */
  runner_id: number | null;
  runner_name: string | null;
  /** How many times a runner was handed it (FetchTask): more than one would be a job served twice. */
  fetches: number;
}

export interface FakeRunner {
  id: number;
  uuid: string;
  token: string;
  name: string;
  description: string;
  ephemeral: boolean;
  labels: string[];
  status: "offline" | "idle" | "active";
  version: string;
  scope: Scope;
  /** The job it took (an ephemeral runner takes one). */
  job_id: number | null;
}

export interface Fault {
  status: number;
  /** Only requests whose path contains this (default: every REST request). */
  path?: string;
  /** How many requests it answers (default 1). */
  count: number;
  retry_after?: number;
}

export class ForgejoWorld {
  readonly tokens = new Set<string>();
  readonly jobs = new Map<number, FakeJob>();
  readonly runners = new Map<number, FakeRunner>();
  faults: Fault[] = [];
  latencyMs = 0;
  readonly requests: { method: string; path: string; at: number }[] = [];
  private nextJob = 1000;
  private nextRunner = 1;
  private nextRun = 1;
  private repoIds = new Map<string, number>();
  private ownerIds = new Map<string, number>();

  private idOf(map: Map<string, number>, key: string): number {
    if (!map.has(key)) map.set(key, map.size + 1);
    return map.get(key)!;
  }

  addJobs(input: { owner: string; repo: string; runs_on: string[]; name?: string; count?: number }): FakeJob[] {
    const run = this.nextRun++;
    const made: FakeJob[] = [];
    for (let i = 0; i < Math.max(1, input.count ?? 1); i++) {
      const job: FakeJob = {
        id: this.nextJob++,
        run_id: run,
        attempt: 1,
        handle: randomUUID(),
        repo_id: this.idOf(this.repoIds, `${input.owner}/${input.repo}`),
        owner_id: this.idOf(this.ownerIds, input.owner),
        name: input.name ?? "build",
        runs_on: input.runs_on,
        task_id: 0,
        status: "waiting",
        owner: input.owner,
        repo: input.repo,
        runner_id: null,
        runner_name: null,
        fetches: 0,
      };
      this.jobs.set(job.id, job);
      made.push(job);
    }
    return made;
  }

  inScope(scope: Scope, owner: string, repo: string): boolean {
    if (scope.kind === "instance") return true;
    if (scope.kind === "organization") return scope.org.toLowerCase() === owner.toLowerCase();
    return scope.owner.toLowerCase() === owner.toLowerCase() && scope.repo.toLowerCase() === repo.toLowerCase();
  }

  /** Forgejo lists waiting jobs, and (by third-party reports) running ones: the client must filter. */
  listJobs(scope: Scope): FakeJob[] {
    return [...this.jobs.values()].filter(
      (j) => (j.status === "waiting" || j.status === "running") && this.inScope(scope, j.owner, j.repo),
    );
  }

  register(scope: Scope, input: { name: string; description?: string; ephemeral?: boolean }): FakeRunner {
    const runner: FakeRunner = {
      id: this.nextRunner++,
      uuid: randomUUID(),
      token: randomBytes(20).toString("hex"),
      name: input.name,
      description: input.description ?? "",
      ephemeral: input.ephemeral === true,
      labels: [],
      status: "offline",
      version: "",
      scope,
      job_id: null,
    };
    this.runners.set(runner.id, runner);
    return runner;
  }

  sameScope(a: Scope, b: Scope): boolean {
    return JSON.stringify(a) === JSON.stringify(b);
  }

  runnersOf(scope: Scope): FakeRunner[] {
    return [...this.runners.values()].filter((r) => this.sameScope(r.scope, scope));
  }

  /** A fault that answers this request, if one is armed (used up as it answers). */
  takeFault(path: string): Fault | null {
    const fault = this.faults.find((f) => !f.path || path.includes(f.path));
    if (!fault) return null;
    fault.count--;
    if (fault.count <= 0) this.faults = this.faults.filter((f) => f !== fault);
    return fault;
  }

  runnerByCredentials(uuid: string | undefined, token: string | undefined): FakeRunner | null {
    const runner = [...this.runners.values()].find((r) => r.uuid === uuid);
    return runner && runner.token === token ? runner : null;
  }

  /**
   * FetchTask by handle: the runner made for a job takes exactly that job. A job no longer
   * waiting gives no task (the runner waits with --wait); a used ephemeral runner gets none.
   */
  fetchTask(runner: FakeRunner, handle: string | undefined): FakeJob | null {
    if (runner.ephemeral && runner.job_id !== null) return null;
    const job = [...this.jobs.values()].find(
      (j) =>
        j.status === "waiting" &&
        this.inScope(runner.scope, j.owner, j.repo) &&
        (handle ? j.handle === handle : j.runs_on.every((l) => runner.labels.includes(l))),
    );
    if (!job) return null;
    job.status = "running";
    job.runner_id = runner.id;
    job.runner_name = runner.name;
    job.fetches++;
    job.task_id = job.id + 50_000;
    runner.job_id = job.id;
    runner.status = "active";
    return job;
  }

  /** The task finished: the job is done, and an ephemeral runner is removed (as Forgejo does). */
  finishTask(runner: FakeRunner, taskId: number, result: "success" | "failure"): FakeJob | null {
    const job = [...this.jobs.values()].find((j) => j.task_id === taskId && j.runner_id === runner.id);
    if (!job) return null;
    job.status = result;
    if (runner.ephemeral) this.runners.delete(runner.id);
    else runner.status = "idle";
    return job;
  }
}
