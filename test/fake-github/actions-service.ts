/**
 * The fake GitHub's Actions service: GitHub's runner scale set API (the pull protocol ARC's
 * listener, GARM and actions/scaleset speak), one per world. Wire format from actions/scaleset
 * v0.4.0: every admin answer starts with a UTF-8 BOM, errors are `{typeName, message}`.
 *
 *   POST {world}[/api/v3]/actions/runner-registration   RemoteAuth <registration token> → {url, token}
 *   {world}/_actions/_apis/runtime/runnergroups/?groupName=X
 *   {world}/_actions/_apis/runtime/runnerscalesets[?runnerGroupId&name] GET|POST, /{id} GET|PATCH|DELETE
 *   …/runnerscalesets/{id}/sessions POST, /sessions/{sid} PATCH|DELETE
 *   …/runnerscalesets/{id}/acquirejobs POST (queue token), /generatejitconfig POST
 *   {world}/_actions/_apis/distributedtask/pools/0/agents[/{id}|?agentName=]
 *   {world}/_actions/_queue/{sid}[?lastMessageId=N]      GET long poll (queue token); /{messageId} DELETE ack
 *
 * Jobs the world's workflows queue with `runs-on: <scale set name>` (labels exactly [name])
 * go through the scale set's queue: JobAvailable → acquire → JobAssigned → a runner of the
 * scale set takes it (JobStarted) → JobCompleted (see workflows.ts, which calls the hooks here).
 * Tests can also queue messages of any shape (`inject`): job items that fail validation, a body
 * that is not JSON, a malformed envelope, an answer that is not JSON or too large. A repository
 * has no runner groups to look up: its runner scale sets are in the default group, id 1.
 * One file past 400 lines: every route shares the service's scale sets, sessions, queues and jobs.
 */
import type { ActionsServiceSettings, ActionsServiceState, FakeRunner, FakeScaleSet, InjectedMessage, ScaleSetJobState } from "./types.ts";
import type { World } from "./world.ts";

export interface ActionsAnswer {
  status: number;
  /** Already serialized (with the BOM), or empty. */
  text: string;
  headers: Record<string, string>;
}

interface Session {
  id: string;
  scaleSetId: number;
  owner: string;
  queueToken: string;
  queueTokenExpiresAt: number;
}

interface QueuedMessage {
  messageId: number;
  items: Record<string, unknown>[];
  /** Fetched by a poll at least once: later events go into a new message. */
  sent: boolean;
  /** Queued by a test as it is (inject): the fake's own events never join it. */
  injected?: InjectedMessage;
}

export interface ScaleSetJob {
  jobId: number;
  runnerRequestId: number;
  scaleSetId: number;
  state: ScaleSetJobState;
  repository: string;
  name: string;
  runId: number;
  queuedAt: number;
}

const BOM = "\uFEFF";
const ADMIN = "/_actions/_apis";
const lc = (s: string) => s.toLowerCase();
const iso = (ms: number) => new Date(ms).toISOString();
const b64url = (s: string) => btoa(s).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
const randomHex = (n: number) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => b.toString(16).padStart(2, "0")).join("");

const answer = (status: number, body?: unknown): ActionsAnswer =>
  body === undefined
    ? { status, text: "", headers: {} }
    : {
        status,
        text: BOM + JSON.stringify(body),
        headers: { "content-type": "application/json; charset=utf-8", activityid: crypto.randomUUID() },
      };
const failure = (status: number, typeName: string, message: string) =>
  answer(status, {
    $id: "1",
    innerException: null,
    message,
    typeName,
    typeKey: typeName.replace(/^.*\./, "").replace(/Exception$/, ""),
    errorCode: 0,
    eventId: 3000,
  });

export class ActionsService {
  settings: Required<ActionsServiceSettings> = { poll_wait_ms: 50_000, admin_token_ttl_s: 3600, queue_token_ttl_s: 3600 };
  readonly scaleSets = new Map<number, FakeScaleSet>();
  readonly sessions = new Map<string, Session>();
  readonly adminTokens = new Map<string, { scope: string; expiresAt: number }>();
  readonly queues = new Map<number, QueuedMessage[]>();
  readonly jobs = new Map<number, ScaleSetJob>();
  /** Runners made by a scale set's generatejitconfig: runner id → scale set id. */
  readonly agents = new Map<number, number>();
  requests: ActionsServiceState["requests"] = [];
  private nextMessageId = 1;
  // Runner request ids are unique across GitHub: worlds start far apart, as ids of different tests must not meet in one D1.
  private nextRequestId = 9_000_000_000 + Math.floor(Math.random() * 1_000_000) * 1000;
  private waiters = new Map<number, Set<() => void>>();
  private readonly world: World;

  constructor(world: World) {
    this.world = world;
  }

  handles(path: string): boolean {
    return path === "/actions/runner-registration" || path === "/api/v3/actions/runner-registration" || path.startsWith("/_actions/");
  }

  state(): ActionsServiceState {
    return {
      scale_sets: [...this.scaleSets.values()],
      sessions: [...this.sessions.values()].map((s) => ({ session_id: s.id, scale_set_id: s.scaleSetId, owner: s.owner })),
      pending_messages: Object.fromEntries(
        [...this.queues].map(([id, q]) => [
          id,
          q.map((m) => ({ messageId: m.messageId, items: m.items.map((i) => String(i.messageType)) })),
        ]),
      ),
      jobs: [...this.jobs.values()].map((j) => ({
        job_id: j.jobId,
        runner_request_id: j.runnerRequestId,
        scale_set_id: j.scaleSetId,
        state: j.state,
      })),
      agents: Object.fromEntries(this.agents),
      requests: this.requests,
      settings: this.settings,
    };
  }

  /** Every admin token and/or queue token issued so far stops working (401), as at expiry. */
  expireTokens(which: { admin?: boolean; queue?: boolean }) {
    const past = this.world.now() - 1;
    if (which.admin) for (const t of this.adminTokens.values()) t.expiresAt = past;
    if (which.queue) for (const s of this.sessions.values()) s.queueTokenExpiresAt = past;
  }

  /** GitHub deleted the scale set (e.g. idle for days): its sessions and queue go with it. */
  deleteScaleSet(id: number): boolean {
    if (!this.scaleSets.delete(id)) return false;
    for (const [sid, s] of this.sessions) if (s.scaleSetId === id) this.sessions.delete(sid);
    this.queues.delete(id);
    this.wake(id);
    return true;
  }

  async handle(
    method: string,
    path: string,
    query: Record<string, string>,
    headers: Record<string, string | undefined>,
    body: unknown,
    worldBase: string,
  ): Promise<ActionsAnswer> {
    const res = await this.route(method, path, query, headers, body, worldBase);
    this.requests.push({ at: this.world.now(), method, path, query, status: res.status, body: body ?? null });
    return res;
  }

  private async route(
    method: string,
    path: string,
    query: Record<string, string>,
    headers: Record<string, string | undefined>,
    body: unknown,
    worldBase: string,
  ): Promise<ActionsAnswer> {
    const fault = this.world.takeFault(method, path);
    if (fault?.kind === "latency") await new Promise((r) => setTimeout(r, fault.latency_ms ?? 1000));
    else if (fault?.kind === "server_error")
      return failure(fault.status ?? 503, "GitHub.Services.Common.VssServiceException", "fake: service unavailable");
    else if (fault?.kind === "unauthorized")
      return failure(401, "Microsoft.VisualStudio.Services.Common.VssUnauthorizedException", "fake: unauthorized");
    else if (fault?.kind === "session_conflict") {
      return failure(
        409,
        "GitHub.Actions.Runtime.WebApi.RunnerScaleSetSessionConflictException",
        "fake: a session for this scale set already exists",
      );
    } else if (fault) return failure(500, "Exception", `fake: fault ${fault.kind} does not apply here`);

    if (path.endsWith("/actions/runner-registration") && method === "POST") return this.register(headers.authorization, body, worldBase);
    const queue = /^\/_actions\/_queue\/([0-9a-f-]+)(?:\/(\d+))?$/.exec(path);
    if (queue) return this.queueCall(method, queue[1]!, queue[2] ? Number(queue[2]) : null, query, headers.authorization);

    const m = /^\/_actions\/_apis\/runtime\/runnerscalesets\/(\d+)\/acquirejobs$/.exec(path);
    if (m && method === "POST") return this.acquire(Number(m[1]), headers.authorization, body);

    const admin = this.adminScope(headers.authorization);
    if (!admin)
      return failure(
        401,
        "Microsoft.VisualStudio.Services.Common.VssUnauthorizedException",
        "TF400813: The user is not authorized to access this resource.",
      );
    if (query["api-version"] !== "6.0-preview")
      return failure(400, "VssVersionNotSpecifiedException", "The api-version query parameter is required.");
    const rest = path.slice(ADMIN.length);
    if (rest === "/runtime/runnergroups/" || rest === "/runtime/runnergroups") {
      // A repository has no runner groups (GitHub's REST API has none for it either): its runner
      // scale sets go in the default group, id 1, which ARC and actions/scaleset use without asking.
      const lookable = admin.startsWith("repos/") ? [] : this.groupsOf(admin);
      const groups = lookable.filter((g) => !query.groupName || lc(g.name) === lc(query.groupName));
      return answer(200, {
        count: groups.length,
        value: groups.map((g) => ({ id: g.id, name: g.name, size: 0, isDefaultGroup: g.default ?? false })),
      });
    }
    if (rest === "/runtime/runnerscalesets" && method === "GET") {
      const found = [...this.scaleSets.values()].filter(
        (s) =>
          s.scope === admin &&
          (!query.runnerGroupId || s.runnerGroupId === Number(query.runnerGroupId)) &&
          (!query.name || lc(s.name) === lc(query.name)),
      );
      return answer(200, { count: found.length, value: found.map((s) => this.view(s, worldBase)) });
    }
    if (rest === "/runtime/runnerscalesets" && method === "POST") return this.createScaleSet(admin, body, worldBase);
    const one = /^\/runtime\/runnerscalesets\/(\d+)(?:\/(sessions|generatejitconfig)(?:\/([0-9a-f-]+))?)?$/.exec(rest);
    if (one) {
      const set = this.scaleSets.get(Number(one[1]));
      if (!set || set.scope !== admin)
        return failure(
          404,
          "GitHub.Actions.Runtime.WebApi.RunnerScaleSetNotFoundException",
          `No runner scale set found with identifier ${one[1]}.`,
        );
      if (!one[2]) return this.scaleSetCall(method, set, body, worldBase);
      if (one[2] === "generatejitconfig" && method === "POST") return this.jit(set, body, worldBase);
      if (one[2] === "sessions") return this.sessionCall(method, set, one[3] ?? null, body, worldBase);
    }
    const agents = /^\/distributedtask\/pools\/0\/agents(?:\/(\d+))?$/.exec(rest);
    if (agents) return this.agentCall(method, admin, agents[1] ? Number(agents[1]) : null, query.agentName);
    return failure(404, "System.Web.Http.HttpResponseException", `fake: no Actions service route ${method} ${path}`);
  }

  private register(auth: string | undefined, body: unknown, worldBase: string): ActionsAnswer {
    const m = /^RemoteAuth\s+(\S+)$/.exec(auth ?? "");
    const reg = m ? this.world.registrationTokens.get(m[1]!) : undefined;
    if (!reg || reg.expiresAt <= this.world.now()) return answer(401, { message: "Bad credentials" });
    const b = (body ?? {}) as { url?: unknown; runner_event?: unknown };
    if (typeof b.url !== "string" || b.runner_event !== "register") return answer(400, { message: "url and runner_event are required" });
    // The config URL names the entity the registration token belongs to.
    const path = new URL(b.url).pathname.split("/").filter(Boolean).map(lc);
    const scope =
      path[0] === "enterprises" ? `enterprises/${path[1]}` : path.length >= 2 ? `repos/${path[0]}/${path[1]}` : `orgs/${path[0]}`;
    if (scope !== reg.scope) return answer(403, { message: `registration token is for ${reg.scope}, not ${scope}` });
    const exp = Math.floor(this.world.now() / 1000) + this.settings.admin_token_ttl_s;
    const token = `${b64url(JSON.stringify({ typ: "JWT", alg: "RS256" }))}.${b64url(JSON.stringify({ sub: scope, exp, nbf: exp - this.settings.admin_token_ttl_s, jti: randomHex(8) }))}.${b64url(randomHex(32))}`;
    this.adminTokens.set(token, { scope, expiresAt: exp * 1000 });
    return answer(200, { url: `${worldBase}/_actions/`, token });
  }

  private adminScope(auth: string | undefined): string | null {
    const m = /^Bearer\s+(\S+)$/.exec(auth ?? "");
    const t = m ? this.adminTokens.get(m[1]!) : undefined;
    return t && t.expiresAt > this.world.now() ? t.scope : null;
  }

  private groupsOf(scope: string) {
    return scope.startsWith("repos/") ? [{ id: 1, name: "Default", default: true }] : this.world.groupsOf(scope);
  }

  private view(s: FakeScaleSet, worldBase: string) {
    return {
      ...s,
      scope: undefined,
      runnerJitConfigUrl: `${worldBase}/_actions/_apis/runtime/runnerscalesets/${s.id}/generatejitconfig`,
      statistics: this.statistics(s.id),
    };
  }

  private createScaleSet(scope: string, body: unknown, worldBase: string): ActionsAnswer {
    const b = (body ?? {}) as { name?: unknown; runnerGroupId?: unknown; labels?: unknown; RunnerSetting?: unknown };
    if (typeof b.name !== "string" || !b.name) return failure(400, "ArgumentException", "name is required");
    const group = this.groupsOf(scope).find((g) => g.id === (b.runnerGroupId ?? 1));
    if (!group)
      return failure(
        404,
        "GitHub.DistributedTask.WebApi.RunnerGroupNotFoundException",
        `No runner group with id ${String(b.runnerGroupId)}`,
      );
    if (
      [...this.scaleSets.values()].some((s) => s.scope === scope && s.runnerGroupId === group.id && lc(s.name) === lc(b.name as string))
    ) {
      return failure(
        409,
        "GitHub.Actions.Runtime.WebApi.RunnerScaleSetExistsException",
        `A runner scale set named ${b.name} already exists in the group.`,
      );
    }
    const labels = Array.isArray(b.labels)
      ? (b.labels as { name?: unknown; type?: unknown }[]).map((l) => ({ name: String(l.name), type: String(l.type ?? "System") }))
      : [];
    const set: FakeScaleSet = {
      id: this.world.newId(),
      name: b.name,
      runnerGroupId: group.id,
      runnerGroupName: group.name,
      labels: labels.length ? labels : [{ name: b.name, type: "System" }],
      RunnerSetting: {
        ephemeral: true,
        isElastic: true,
        disableUpdate: Boolean((b.RunnerSetting as { disableUpdate?: unknown } | undefined)?.disableUpdate),
      },
      createdOn: iso(this.world.now()),
      scope,
    };
    this.scaleSets.set(set.id, set);
    return answer(200, this.view(set, worldBase));
  }

  private scaleSetCall(method: string, set: FakeScaleSet, body: unknown, worldBase: string): ActionsAnswer {
    if (method === "GET") return answer(200, this.view(set, worldBase));
    if (method === "DELETE") {
      this.deleteScaleSet(set.id);
      return answer(204);
    }
    if (method === "PATCH") {
      const b = (body ?? {}) as { name?: unknown; runnerGroupId?: unknown; RunnerSetting?: { disableUpdate?: unknown } };
      if (typeof b.name === "string" && b.name) set.name = b.name;
      if (typeof b.runnerGroupId === "number") {
        const g = this.groupsOf(set.scope).find((x) => x.id === b.runnerGroupId);
        if (!g) return failure(404, "GitHub.DistributedTask.WebApi.RunnerGroupNotFoundException", "No such runner group");
        set.runnerGroupId = g.id;
        set.runnerGroupName = g.name;
      }
      if (b.RunnerSetting && typeof b.RunnerSetting.disableUpdate === "boolean")
        set.RunnerSetting.disableUpdate = b.RunnerSetting.disableUpdate;
      return answer(200, this.view(set, worldBase));
    }
    return failure(405, "MethodNotAllowed", "fake: method not allowed");
  }

  private sessionCall(method: string, set: FakeScaleSet, sessionId: string | null, body: unknown, worldBase: string): ActionsAnswer {
    if (method === "POST" && !sessionId) {
      if ([...this.sessions.values()].some((s) => s.scaleSetId === set.id)) {
        return failure(
          409,
          "GitHub.Actions.Runtime.WebApi.RunnerScaleSetSessionConflictException",
          `The scale set ${set.name} already has an active session.`,
        );
      }
      const owner = String((body as { ownerName?: unknown } | null)?.ownerName ?? "");
      const s: Session = { id: crypto.randomUUID(), scaleSetId: set.id, owner, queueToken: "", queueTokenExpiresAt: 0 };
      this.issueQueueToken(s);
      this.sessions.set(s.id, s);
      return answer(200, this.sessionView(s, set, worldBase));
    }
    const s = sessionId ? this.sessions.get(sessionId) : undefined;
    if (!s || s.scaleSetId !== set.id)
      return failure(404, "GitHub.Actions.Runtime.WebApi.RunnerScaleSetSessionNotFoundException", `No session ${sessionId}`);
    if (method === "PATCH") {
      this.issueQueueToken(s);
      return answer(200, this.sessionView(s, set, worldBase));
    }
    if (method === "DELETE") {
      this.sessions.delete(s.id);
      this.wake(set.id);
      return answer(204);
    }
    return failure(405, "MethodNotAllowed", "fake: method not allowed");
  }

  private issueQueueToken(s: Session) {
    s.queueToken = `mq_${randomHex(20)}`;
    s.queueTokenExpiresAt = this.world.now() + this.settings.queue_token_ttl_s * 1000;
  }

  private sessionView(s: Session, set: FakeScaleSet, worldBase: string) {
    return {
      sessionId: s.id,
      ownerName: s.owner,
      runnerScaleSet: this.view(set, worldBase),
      messageQueueUrl: `${worldBase}/_actions/_queue/${s.id}`,
      messageQueueAccessToken: s.queueToken,
      statistics: this.statistics(set.id),
    };
  }

  /** The live session whose queue token this is, or null (401). */
  private queueSession(auth: string | undefined, sessionId?: string): Session | null {
    const m = /^Bearer\s+(\S+)$/.exec(auth ?? "");
    const s = [...this.sessions.values()].find((x) => m && x.queueToken === m[1]);
    if (!s || s.queueTokenExpiresAt <= this.world.now() || (sessionId && s.id !== sessionId)) return null;
    return s;
  }

  private async queueCall(
    method: string,
    sessionId: string,
    messageId: number | null,
    query: Record<string, string>,
    auth: string | undefined,
  ): Promise<ActionsAnswer> {
    const s = this.queueSession(auth, sessionId);
    if (!s)
      return failure(
        401,
        "Microsoft.VisualStudio.Services.Common.VssUnauthorizedException",
        "The message queue token is not valid (expired or the session is gone).",
      );
    if (method === "DELETE" && messageId !== null) {
      const q = this.queues.get(s.scaleSetId) ?? [];
      const i = q.findIndex((x) => x.messageId === messageId);
      if (i >= 0) q.splice(i, 1);
      return answer(204);
    }
    if (method !== "GET" || messageId !== null) return failure(405, "MethodNotAllowed", "fake: method not allowed");
    const after = Number(query.lastMessageId ?? 0) || 0;
    const deadline = Date.now() + this.settings.poll_wait_ms;
    for (;;) {
      if (!this.sessions.has(s.id))
        return failure(401, "Microsoft.VisualStudio.Services.Common.VssUnauthorizedException", "The session is gone.");
      const next = (this.queues.get(s.scaleSetId) ?? []).find((x) => x.messageId > after);
      if (next?.injected) return this.injectedAnswer(next, s.scaleSetId);
      if (next) {
        next.sent = true;
        return answer(200, {
          messageId: next.messageId,
          messageType: "RunnerScaleSetJobMessages",
          body: JSON.stringify(next.items),
          statistics: this.statistics(s.scaleSetId),
        });
      }
      const left = deadline - Date.now();
      if (left <= 0) return answer(202);
      await new Promise<void>((resolve) => {
        const set = this.waiters.get(s.scaleSetId) ?? new Set();
        this.waiters.set(s.scaleSetId, set);
        const done = () => {
          clearTimeout(timer);
          set.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        set.add(done);
      });
    }
  }

  /** Queues a message as a test wrote it (see InjectedMessage); its id. */
  inject(scaleSetId: number, m: InjectedMessage): number | null {
    if (!this.scaleSets.has(scaleSetId)) return null;
    const q = this.queues.get(scaleSetId) ?? [];
    this.queues.set(scaleSetId, q);
    const messageId = this.nextMessageId++;
    q.push({ messageId, items: [], sent: false, injected: m });
    this.wake(scaleSetId);
    return messageId;
  }

  private injectedAnswer(next: QueuedMessage, scaleSetId: number): ActionsAnswer {
    next.sent = true;
    const m = next.injected!;
    const headers = { "content-type": "application/json; charset=utf-8" };
    if (m.text !== undefined) return { status: 200, text: BOM + m.text, headers };
    const envelope = {
      messageId: next.messageId,
      ...(m.pad_bytes && { padding: "x".repeat(m.pad_bytes) }),
      messageType: "RunnerScaleSetJobMessages",
      body: m.body ?? JSON.stringify(m.items ?? []),
      statistics: this.statistics(scaleSetId),
      ...m.envelope,
    };
    return { status: 200, text: BOM + JSON.stringify(envelope), headers };
  }

  private acquire(scaleSetId: number, auth: string | undefined, body: unknown): ActionsAnswer {
    const s = this.queueSession(auth);
    if (!s || s.scaleSetId !== scaleSetId)
      return failure(401, "Microsoft.VisualStudio.Services.Common.VssUnauthorizedException", "The message queue token is not valid.");
    if (!Array.isArray(body)) return failure(400, "ArgumentException", "body must be an array of runner request ids");
    const acquired: number[] = [];
    for (const id of body as unknown[]) {
      const job = [...this.jobs.values()].find((j) => j.runnerRequestId === id && j.scaleSetId === scaleSetId && j.state === "available");
      if (!job) continue;
      job.state = "assigned";
      acquired.push(job.runnerRequestId);
      this.push(job, "JobAssigned");
    }
    return answer(200, { count: acquired.length, value: acquired });
  }

  private jit(set: FakeScaleSet, body: unknown, worldBase: string): ActionsAnswer {
    const b = (body ?? {}) as { name?: unknown; workFolder?: unknown };
    if (typeof b.name !== "string" || !b.name) return failure(400, "ArgumentException", "name is required");
    if ([...this.world.runners.values()].some((r) => r.scope === set.scope && lc(r.name) === lc(b.name as string))) {
      return failure(409, "GitHub.DistributedTask.WebApi.AgentExistsException", `A runner named ${b.name} already exists.`);
    }
    const { runner, encoded } = this.world.issueJitRunner({
      scope: set.scope,
      name: b.name,
      labels: [...new Set([set.name, ...set.labels.map((l) => l.name)])],
      runnerGroupId: set.runnerGroupId,
      serverUrl: worldBase,
      workFolder: typeof b.workFolder === "string" ? b.workFolder : "_work",
    });
    this.agents.set(runner.id, set.id);
    return answer(200, { runner: { id: runner.id, name: runner.name, runnerScaleSetId: set.id }, encodedJITConfig: encoded });
  }

  private agentCall(method: string, scope: string, id: number | null, agentName: string | undefined): ActionsAnswer {
    const ref = (r: FakeRunner) => ({
      id: r.id,
      name: r.name,
      runnerScaleSetId: this.agents.get(r.id) ?? 0,
      status: r.status,
      busy: r.busy,
    });
    const mine = [...this.world.runners.values()].filter((r) => r.scope === scope);
    if (id === null && method === "GET") {
      const found = mine.filter((r) => !agentName || lc(r.name) === lc(agentName));
      return answer(200, { count: found.length, value: found.map(ref) });
    }
    const r = mine.find((x) => x.id === id);
    if (!r) return failure(404, "GitHub.DistributedTask.WebApi.AgentNotFoundException", `No agent with id ${id}`);
    if (method === "GET") return answer(200, ref(r));
    if (method === "DELETE") {
      if (r.busy) return failure(400, "GitHub.DistributedTask.WebApi.JobStillRunningException", "The runner is running a job.");
      this.world.runners.delete(r.id);
      this.agents.delete(r.id);
      return answer(204);
    }
    return failure(405, "MethodNotAllowed", "fake: method not allowed");
  }

  // ---- the workflow side (called by workflows.ts) ----

  /** The scale set a job with these labels targets (`runs-on: <name>`), among those the repository can use. */
  scaleSetFor(repository: string, labels: string[]): FakeScaleSet | null {
    if (labels.length !== 1) return null;
    const [owner] = repository.split("/");
    const scopes = [`repos/${lc(repository)}`, `orgs/${lc(owner!)}`];
    return [...this.scaleSets.values()].find((s) => scopes.includes(s.scope) && lc(s.name) === lc(labels[0]!)) ?? null;
  }

  jobQueued(set: FakeScaleSet, j: { id: number; repository: string; name: string; run_id: number; queued_at: number }) {
    const job: ScaleSetJob = {
      jobId: j.id,
      runnerRequestId: this.nextRequestId++,
      scaleSetId: set.id,
      state: "available",
      repository: j.repository,
      name: j.name,
      runId: j.run_id,
      queuedAt: j.queued_at,
    };
    this.jobs.set(j.id, job);
    this.push(job, "JobAvailable");
  }

  /** Whether this runner may take this job: scale set jobs go to their scale set's runners once assigned, and only there. */
  mayRun(jobId: number, runnerId: number): boolean {
    const job = this.jobs.get(jobId);
    const set = this.agents.get(runnerId);
    if (!job) return set === undefined;
    return job.state === "assigned" && set === job.scaleSetId;
  }

  jobStarted(jobId: number, runner: { id: number; name: string }) {
    const job = this.jobs.get(jobId);
    if (!job) return;
    job.state = "running";
    this.push(job, "JobStarted", { runnerId: runner.id, runnerName: runner.name });
  }

  jobCompleted(jobId: number, runner: { id: number; name: string }, conclusion: string) {
    const job = this.jobs.get(jobId);
    if (!job) return;
    job.state = "completed";
    const result =
      conclusion === "success" ? "succeeded" : conclusion === "failure" ? "failed" : conclusion === "cancelled" ? "canceled" : conclusion;
    this.push(job, "JobCompleted", { runnerId: runner.id, runnerName: runner.name, result });
    this.agents.delete(runner.id);
  }

  statistics(scaleSetId: number) {
    const jobs = [...this.jobs.values()].filter((j) => j.scaleSetId === scaleSetId);
    const count = (...states: ScaleSetJobState[]) => jobs.filter((j) => states.includes(j.state)).length;
    const runners = [...this.agents]
      .filter(([, s]) => s === scaleSetId)
      .map(([id]) => this.world.runners.get(id))
      .filter((r) => r !== undefined);
    const busy = runners.filter((r) => r.busy).length;
    return {
      totalAvailableJobs: count("available"),
      totalAcquiredJobs: count("assigned", "running"),
      totalAssignedJobs: count("assigned", "running"),
      totalRunningJobs: count("running"),
      totalRegisteredRunners: runners.length,
      totalBusyRunners: busy,
      totalIdleRunners: runners.length - busy,
    };
  }

  private push(job: ScaleSetJob, messageType: string, extra: Record<string, unknown> = {}) {
    const [owner, repo] = job.repository.split("/");
    const now = iso(this.world.now());
    const item = {
      messageType,
      runnerRequestId: job.runnerRequestId,
      repositoryName: repo,
      ownerName: owner,
      jobId: `${job.jobId.toString(16).padStart(8, "0")}-0000-4000-8000-${job.runnerRequestId.toString(16).padStart(12, "0")}`,
      jobWorkflowRef: `${job.repository}/.github/workflows/ci.yml@refs/heads/main`,
      jobDisplayName: job.name,
      workflowRunId: job.runId,
      eventName: "push",
      requestLabels: [this.scaleSets.get(job.scaleSetId)?.name ?? ""],
      queueTime: iso(job.queuedAt),
      scaleSetAssignTime: now,
      runnerAssignTime: messageType === "JobStarted" || messageType === "JobCompleted" ? now : "0001-01-01T00:00:00Z",
      finishTime: messageType === "JobCompleted" ? now : "0001-01-01T00:00:00Z",
      ...(messageType === "JobAvailable" && { acquireJobUrl: `/_apis/runtime/runnerscalesets/${job.scaleSetId}/acquirejobs` }),
      ...extra,
    };
    const q = this.queues.get(job.scaleSetId) ?? [];
    this.queues.set(job.scaleSetId, q);
    const last = q.at(-1);
    if (last && !last.sent && !last.injected && last.items.length < 50) last.items.push(item);
    else q.push({ messageId: this.nextMessageId++, items: [item], sent: false });
    this.wake(job.scaleSetId);
  }

  private wake(scaleSetId: number) {
    for (const w of [...(this.waiters.get(scaleSetId) ?? [])]) w();
  }
}
