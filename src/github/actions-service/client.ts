/**
 * The runner scale set API (GitHub's Actions service) for one entity: implements the scale
 * set's ActionsServicePort over HTTP. Admin calls carry the admin JWT from the registration
 * exchange (admin-token.ts); queue calls (poll, ack, acquire) carry the session's queue token.
 * Every outcome is a value: 5xx and network failures come back `retryable` for the caller's
 * backoff rather than being retried here (a Durable Object alarm is the retry loop).
 */

import type { z } from "zod";
import { BodyTooLarge, readLimitedBody } from "../../http/limited-body";
import { type Clock, systemClock } from "../../lib/clock";
import { measuredFetch } from "../../lib/invocation-cost";
import { errorText, logger } from "../../observability/log";
import { countGithubCall } from "../../observability/op-counters";
import type {
  ActionsError,
  ActionsResult,
  ActionsServicePort,
  ListenerSession,
  QueueMessage,
  UnreadableMessage,
} from "../../scaleset/listener/actions-port";
import { type GithubClient, USER_AGENT } from "../github-client";
import type { GithubScope } from "../scope";
import { type AdminConnection, AdminTokens } from "./admin-token";
import {
  acquiredSchema,
  actionsError,
  agentSchema,
  jitSchema,
  listSchema,
  MAX_ACTIONS_BODY_BYTES,
  messageIdFromHead,
  parseBody,
  parseQueueMessage,
  runnerGroupSchema,
  scaleSetSchema,
  sessionSchema,
} from "./wire";

export const API_VERSION = "6.0-preview";
const SCALE_SETS = "_apis/runtime/runnerscalesets";
const AGENTS = "_apis/distributedtask/pools/0/agents";
/** An admin call's timeout; a poll gets longer (the service holds an empty one ~50 s). */
const CALL_TIMEOUT_MS = 30_000;
export const POLL_TIMEOUT_MS = 70_000;

export interface ActionsClientOptions {
  gh: GithubClient;
  scope: GithubScope;
  fetch?: typeof fetch;
  clock?: Clock;
  /** Admin tokens shared by this isolate's clients (one exchange per entity, not per call). */
  adminTokens?: AdminTokens;
}

/** How much of a too-large message is kept to find its id in (messageIdFromHead). */
const MESSAGE_HEAD_BYTES = 256;

/**
 * An HTTP answer, one too large to read (`head`: its first bytes, when asked for), no answer at
 * all (network, timeout), or no call made (no admin token).
 */
type Answer =
  | { kind: "answer"; status: number; body: unknown }
  | { kind: "too_large"; status: number; limit: number; head: Uint8Array }
  | { kind: "no_answer"; status: 0; error: string }
  | { kind: "not_sent"; status: -1; error: ActionsError };

const fail = (error: ActionsError): { ok: false; error: ActionsError } => ({ ok: false, error });
const ok = <T>(value: T): { ok: true; value: T } => ({ ok: true, value });

const sharedAdminTokens = new AdminTokens();

export class ActionsServiceClient implements ActionsServicePort {
  private readonly fetchFn: typeof fetch;
  private readonly clock: Clock;
  private readonly tokens: AdminTokens;

  constructor(private readonly o: ActionsClientOptions) {
    this.fetchFn = o.fetch ?? measuredFetch;
    this.clock = o.clock ?? systemClock;
    this.tokens = o.adminTokens ?? sharedAdminTokens;
  }

  async runnerGroupId(name: string): Promise<ActionsResult<number>> {
    const r = await this.admin("actions_get_runner_group", "GET", "_apis/runtime/runnergroups/", { groupName: name });
    const list = this.read(r, 200, listSchema(runnerGroupSchema));
    if (!list.ok) return list;
    const group = (list.value.value ?? []).find((g) => g.name.toLowerCase() === name.toLowerCase());
    return group ? ok(group.id) : fail({ kind: "not_found", message: `no runner group named ${name}`, status: 200 });
  }

  async findScaleSet(runnerGroupId: number, name: string) {
    const r = await this.admin("actions_find_scale_set", "GET", SCALE_SETS, { runnerGroupId: String(runnerGroupId), name });
    const list = this.read(r, 200, listSchema(scaleSetSchema));
    if (!list.ok) return list;
    const found = list.value.value ?? [];
    if (found.length > 1) return fail({ kind: "permanent", message: `${found.length} runner scale sets are named ${name}` });
    return ok(found[0] ?? null);
  }

  async getScaleSet(id: number) {
    return this.read(await this.admin("actions_get_scale_set", "GET", `${SCALE_SETS}/${id}`), 200, scaleSetSchema);
  }

  async createScaleSet(input: { name: string; runnerGroupId: number; labels: string[] }) {
    const body = {
      name: input.name,
      runnerGroupId: input.runnerGroupId,
      labels: input.labels.map((name) => ({ name, type: "System" })),
      RunnerSetting: { ephemeral: true, disableUpdate: true },
    };
    return this.read(await this.admin("actions_create_scale_set", "POST", SCALE_SETS, {}, body), 200, scaleSetSchema);
  }

  async deleteScaleSet(id: number): Promise<ActionsResult<void>> {
    const r = await this.admin("actions_delete_scale_set", "DELETE", `${SCALE_SETS}/${id}`);
    return this.done(r, [204], true);
  }

  async createSession(scaleSetId: number, owner: string) {
    return this.read(
      await this.admin("actions_create_session", "POST", `${SCALE_SETS}/${scaleSetId}/sessions`, {}, { ownerName: owner }),
      200,
      sessionSchema,
    );
  }

  async refreshSession(scaleSetId: number, sessionId: string) {
    const r = await this.admin("actions_refresh_session", "PATCH", `${SCALE_SETS}/${scaleSetId}/sessions/${encodeURIComponent(sessionId)}`);
    return this.read(r, 200, sessionSchema);
  }

  async deleteSession(scaleSetId: number, sessionId: string): Promise<ActionsResult<void>> {
    const r = await this.admin("actions_delete_session", "DELETE", `${SCALE_SETS}/${scaleSetId}/sessions/${encodeURIComponent(sessionId)}`);
    return this.done(r, [204], true);
  }

  async getMessage(
    session: ListenerSession,
    lastMessageId: number,
    maxCapacity: number,
  ): Promise<ActionsResult<QueueMessage | UnreadableMessage | null>> {
    const url = new URL(session.messageQueueUrl);
    if (lastMessageId > 0) url.searchParams.set("lastMessageId", String(lastMessageId));
    const r = await this.send("actions_get_message", "GET", url.toString(), `Bearer ${session.messageQueueAccessToken}`, {
      timeoutMs: POLL_TIMEOUT_MS,
      headers: {
        accept: `application/json; api-version=${API_VERSION}`,
        "x-scalesetmaxcapacity": String(Math.max(0, maxCapacity)),
      },
      keepHead: MESSAGE_HEAD_BYTES,
    });
    if (r.status === 202) return ok(null);
    // A message that came but cannot be read is handed over with its id, so it can be acknowledged.
    const unreadable = (messageId: number | null, why: string): ActionsResult<UnreadableMessage> =>
      messageId === null
        ? fail({ kind: r.kind === "too_large" ? "too_large" : "permanent", message: why, status: 200 })
        : ok({ messageId, unreadable: why });
    if (r.kind === "too_large" && r.status === 200) return unreadable(messageIdFromHead(r.head), `message larger than ${r.limit} bytes`);
    if (r.kind !== "answer" || r.status !== 200) return fail(this.error(r));
    if (r.body === undefined) return unreadable(null, "message is not JSON");
    const parsed = parseQueueMessage(r.body);
    return parsed.ok ? ok(parsed.value) : unreadable(parsed.messageId, parsed.message);
  }

  async deleteMessage(session: ListenerSession, messageId: number): Promise<ActionsResult<void>> {
    const url = new URL(session.messageQueueUrl);
    url.pathname = `${url.pathname.replace(/\/+$/, "")}/${messageId}`;
    return this.done(
      await this.send("actions_delete_message", "DELETE", url.toString(), `Bearer ${session.messageQueueAccessToken}`),
      [204, 200],
      true,
    );
  }

  async acquireJobs(scaleSetId: number, session: ListenerSession, runnerRequestIds: number[]) {
    const conn = await this.connection();
    if (!conn.ok) return conn;
    const url = this.adminUrl(conn.value, `${SCALE_SETS}/${scaleSetId}/acquirejobs`, {});
    const r = await this.send("actions_acquire_jobs", "POST", url, `Bearer ${session.messageQueueAccessToken}`, { body: runnerRequestIds });
    return this.read(r, 200, acquiredSchema);
  }

  async generateJitConfig(scaleSetId: number, name: string) {
    const r = await this.admin(
      "actions_generate_jit_config",
      "POST",
      `${SCALE_SETS}/${scaleSetId}/generatejitconfig`,
      {},
      { name, workFolder: "_work" },
    );
    return this.read(r, 200, jitSchema);
  }

  async findRunner(name: string) {
    const list = this.read(await this.admin("actions_find_runner", "GET", AGENTS, { agentName: name }), 200, listSchema(agentSchema));
    if (!list.ok) return list;
    const found = (list.value.value ?? []).find((a) => a.name.toLowerCase() === name.toLowerCase());
    return ok(found ?? null);
  }

  async removeRunner(runnerId: number): Promise<ActionsResult<void>> {
    return this.done(await this.admin("actions_remove_runner", "DELETE", `${AGENTS}/${runnerId}`), [204], true);
  }

  // ---- plumbing ----

  private async connection(force = false): Promise<ActionsResult<AdminConnection>> {
    return this.tokens.get({ gh: this.o.gh, scope: this.o.scope, fetch: this.fetchFn, clock: this.clock }, force);
  }

  private adminUrl(conn: AdminConnection, path: string, query: Record<string, string>): string {
    const url = new URL(path, conn.serviceUrl.endsWith("/") ? conn.serviceUrl : `${conn.serviceUrl}/`);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    url.searchParams.set("api-version", API_VERSION);
    return url.toString();
  }

  /** An admin call; a 401 gets one fresh admin token (it may have been revoked or expired early). */
  private async admin(
    operation: string,
    method: string,
    path: string,
    query: Record<string, string> = {},
    body?: unknown,
  ): Promise<Answer> {
    for (let attempt = 0; ; attempt++) {
      const conn = await this.connection(attempt > 0);
      if (!conn.ok) return { kind: "not_sent", status: -1, error: conn.error };
      const r = await this.send(operation, method, this.adminUrl(conn.value, path, query), `Bearer ${conn.value.token}`, { body });
      if (r.status === 401 && attempt === 0) continue;
      return r;
    }
  }

  /** One call; its answer is read up to MAX_ACTIONS_BODY_BYTES (`keepHead`: bytes of a larger one to keep). */
  private async send(
    operation: string,
    method: string,
    url: string,
    authorization: string,
    o: { body?: unknown; timeoutMs?: number; headers?: Record<string, string>; keepHead?: number } = {},
  ): Promise<Answer> {
    const started = this.clock.now();
    const logged = (status: number | null, good: boolean, error?: string) => {
      countGithubCall(operation, this.o.gh.credentialId, good);
      logger[good ? "debug" : "warn"]({
        event: "actions_service_call",
        operation,
        method,
        status,
        duration_ms: this.clock.now() - started,
        ...(error !== undefined && { error }),
      });
    };
    let res: Response;
    try {
      res = await this.fetchFn(url, {
        method,
        headers: {
          authorization,
          "user-agent": USER_AGENT,
          ...(o.body !== undefined && { "content-type": "application/json" }),
          ...o.headers,
        },
        body: o.body === undefined ? undefined : JSON.stringify(o.body),
        signal: AbortSignal.timeout(o.timeoutMs ?? CALL_TIMEOUT_MS),
      });
    } catch (err) {
      logged(null, false, errorText(err));
      return { kind: "no_answer", status: 0, error: errorText(err) };
    }
    try {
      const parsed = parseBody(await readLimitedBody(res, MAX_ACTIONS_BODY_BYTES, o.keepHead));
      const good = res.status < 300;
      logged(res.status, good, good ? undefined : `HTTP ${res.status}`);
      return { kind: "answer", status: res.status, body: parsed };
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        logged(res.status, false, `answer larger than ${err.limit} bytes`);
        return { kind: "too_large", status: res.status, limit: err.limit, head: err.head };
      }
      logged(res.status, false, errorText(err));
      return { kind: "no_answer", status: 0, error: errorText(err) };
    }
  }

  private error(r: Answer): ActionsError {
    if (r.kind === "not_sent") return r.error;
    if (r.kind === "no_answer") return { kind: "retryable", message: r.error };
    // A failure status says what failed whatever its body; a success too large to read is its own kind.
    if (r.kind === "too_large")
      return r.status < 300
        ? { kind: "too_large", status: r.status, message: `answer larger than ${r.limit} bytes` }
        : actionsError(r.status, undefined, `HTTP ${r.status} (answer larger than ${r.limit} bytes, unread)`);
    return actionsError(r.status, r.body, `HTTP ${r.status}`);
  }

  private read<S extends z.ZodType>(r: Answer, status: number, schema: S): ActionsResult<z.output<S>> {
    if (r.kind !== "answer" || r.status !== status) return fail(this.error(r));
    const parsed = schema.safeParse(r.body);
    return parsed.success
      ? ok(parsed.data)
      : fail({ kind: "permanent", status, message: `unexpected answer: ${parsed.error.issues[0]?.message ?? "invalid"}` });
  }

  /** A call with no answer body; `goneIsDone`: 404 means what we wanted is already true. */
  private done(r: Answer, statuses: number[], goneIsDone: boolean): ActionsResult<void> {
    if (statuses.includes(r.status)) return ok(undefined);
    const e = this.error(r);
    return goneIsDone && e.kind === "not_found" ? ok(undefined) : fail(e);
  }
}
