import { createDb, type Db } from "../db/client";
import { type CredentialContext, loadCredentialContext, type StatePatch, writeCredentialState } from "../db/github/github-state-store";
import type { Env } from "../env";
import { type Clock, systemClock } from "../lib/clock";
import { measuredFetch } from "../lib/invocation-cost";
import { logEvent } from "../observability/log";
import { scaleSetSettings } from "../scaleset/settings";
import type { GithubBudgetPolicy } from "./budget/budget";
import { learnFromSecondaryLimit } from "./budget/budget-learning";
import { logCall } from "./call-log";
import { CredentialAuth } from "./credential-auth";
import { refuseUnlessBound } from "./credential-binding";
import {
  GithubApiError,
  GithubCredentialFailingError,
  GithubError,
  GithubRateLimitedError,
  GithubSendDeadlineError,
  GithubUnavailableError,
} from "./errors";
import {
  isLow,
  isRateLimited,
  isSecondaryLimit,
  parseRateLimit,
  type RateLimitSnapshot,
  rateLimitedUntil,
  serverErrorBackoff,
  withJitter,
} from "./rate-limit";
import { buildUrl, nextLink, type QueryParams } from "./request-url";

export const GITHUB_API_VERSION = "2022-11-28";
export const USER_AGENT = "Edgerunner/0.1 (self-hosted GitHub Actions runner coordinator)";

export interface GithubClientOptions {
  env: Pick<Env, "DB" | "ENCRYPTION_KEY" | "ENCRYPTION_KEYS_PREVIOUS" | "GITHUB_POINTS_PER_MINUTE" | "GITHUB_BUDGET_WINDOW_SECONDS">;
  credentialId: string;
  /**
   * The credential's GitHub budget as configured, which a secondary-limit refusal cuts
   * (github/budget/budget.ts, learnFromRefusal). Default: the Worker's (GITHUB_POINTS_PER_MINUTE); null:
   * no budget, nothing to learn.
   */
  budget?: GithubBudgetPolicy | null;
  clock?: Clock;
  fetch?: typeof fetch;
  /**
   * Longest a call waits in place for a rate-limit window to end. Longer windows throw
   * GithubRateLimitedError with the time to come back, so a Durable Object sets an alarm
   * instead of holding an invocation open.
   */
  maxWaitMs?: number;
  /** Attempts for 5xx and network failures, the first included. */
  maxAttempts?: number;
  /** Per-request timeout. */
  timeoutMs?: number;
}

export interface RequestOptions {
  query?: QueryParams;
  body?: unknown;
  /** Statuses (besides 2xx) the operation handles itself instead of failing. */
  allow?: number[];
  /**
   * Unix ms after which the request is not sent (GithubSendDeadlineError), checked before every
   * attempt: a call paid for in a GitHub budget window must leave within it (budget/budget.ts).
   */
  sendBy?: number;
}

export interface GithubResponse<T> {
  status: number;
  data: T;
  headers: Headers;
}

/** How stale a loaded credential state may get before the next call re-reads it. */
export const STATE_TTL_MS = 5_000;
/** Rate-limit figures are written at most this often per credential, unless they matter now. */
export const RATE_LIMIT_PERSIST_INTERVAL_MS = 15_000;

const DEFAULT_MAX_WAIT_MS = 15_000;
const DEFAULT_MAX_ATTEMPTS = 3;
const DEFAULT_TIMEOUT_MS = 30_000;
/** Waiting on rate limits inside one call ends after this many windows, whatever they say. */
const MAX_RATE_LIMIT_WAITS = 5;

type AuthMode = { kind: "token" } | { kind: "app-jwt" };

/**
 * A GitHub REST client for one credential. State every isolate must agree on — whether the
 * credential works, until when it is rate limited, its installation token — lives in D1
 * (github_credential_state); this object holds a snapshot of it, re-read every few seconds.
 * Cheap to create: make one per unit of work. This file is the transport: `call` decides each
 * attempt (rate-limit waits, the send deadline, retries, token refresh, what a secondary-limit
 * refusal teaches the budget) over the shared state in one loop, so it reads in one place. How a
 * request is authenticated is credential-auth.ts, where it may go request-url.ts and
 * credential-binding.ts, the line it logs call-log.ts; the operations on runners and hooks are
 * runners.ts and hooks.ts.
 */
export class GithubClient {
  readonly credentialId: string;
  readonly db: Db;
  readonly clock: Clock;
  private readonly fetchFn: typeof fetch;
  private readonly maxWaitMs: number;
  private readonly maxAttempts: number;
  private readonly timeoutMs: number;
  private readonly budget: GithubBudgetPolicy | null;
  private ctx: CredentialContext | null = null;
  private ctxLoadedAt = 0;
  private readonly auth: CredentialAuth;

  constructor(private readonly options: GithubClientOptions) {
    this.credentialId = options.credentialId;
    this.db = createDb(options.env);
    this.clock = options.clock ?? systemClock;
    this.fetchFn = options.fetch ?? measuredFetch;
    this.maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.budget = options.budget !== undefined ? options.budget : scaleSetSettings(options.env).githubBudget;
    this.auth = new CredentialAuth({
      credentialId: this.credentialId,
      clock: this.clock,
      env: options.env,
      context: () => this.context(),
      saveState: (patch) => this.saveState(patch),
      markFailing: (reason) => this.markFailing(reason),
      callAsApp: (operation, method, path) => this.call(operation, method, path, {}, { kind: "app-jwt" }),
    });
  }

  /** The credential, its endpoint and shared state, re-read when older than STATE_TTL_MS. */
  async context(force = false): Promise<CredentialContext> {
    const now = this.clock.now();
    if (!force && this.ctx && now - this.ctxLoadedAt < STATE_TTL_MS) return this.ctx;
    const ctx = await loadCredentialContext(this.db, this.credentialId);
    if (!ctx) throw new GithubError(`GitHub credentials ${this.credentialId} do not exist`);
    if (this.ctx && this.ctx.credential.updatedAt !== ctx.credential.updatedAt) {
      this.auth.forget();
    }
    this.ctx = ctx;
    this.ctxLoadedAt = now;
    return ctx;
  }

  /** Calls the REST API with the credential's token. Path is relative to the endpoint's API base. */
  async request<T = unknown>(operation: string, method: string, path: string, opts: RequestOptions = {}): Promise<GithubResponse<T>> {
    return this.call<T>(operation, method, path, opts, { kind: "token" });
  }

  /** Calls the REST API as the App itself (its JWT, not an installation token): the App's installations and webhook. */
  async requestAsApp<T = unknown>(operation: string, method: string, path: string, opts: RequestOptions = {}): Promise<GithubResponse<T>> {
    return this.call<T>(operation, method, path, opts, { kind: "app-jwt" });
  }

  /** Follows `Link: rel="next"` to collect every page of a list. */
  // biome-ignore lint/suspicious/noExplicitAny: each caller picks its list out of a GitHub page whose shape it knows
  async paginate<T>(operation: string, path: string, pick: (page: any) => T[], query: RequestOptions["query"] = {}): Promise<T[]> {
    const items: T[] = [];
    let next: string | null = path;
    let q: RequestOptions["query"] = { per_page: 100, ...query };
    for (let page = 0; next && page < 1000; page++) {
      const res: GithubResponse<unknown> = await this.request(operation, "GET", next, { query: q });
      items.push(...pick(res.data));
      next = nextLink(res.headers.get("link"), (await this.context()).apiBaseUrl);
      q = undefined; // the next link carries the query
    }
    return items;
  }

  private async call<T>(operation: string, method: string, path: string, opts: RequestOptions, auth: AuthMode): Promise<GithubResponse<T>> {
    let serverAttempts = 0;
    // What the last failed attempt was, should the send deadline end the retries.
    let lastFailure: { status: number | null; detail: string } | null = null;
    let rateLimitWaits = 0;
    let retriedWithFreshToken = false;
    for (;;) {
      const ctx = await this.context();
      const state = ctx.state;
      if (state?.health === "failing") {
        throw new GithubCredentialFailingError(this.credentialId, state.failureReason ?? "refused by GitHub");
      }
      const blockedUntil = state?.blockedUntil ?? 0;
      if (blockedUntil > this.clock.now()) {
        // Everyone waiting for this window would otherwise come back at the same instant.
        const resumeAt = withJitter(blockedUntil, this.clock.random());
        const wait = resumeAt - this.clock.now();
        if (wait > this.maxWaitMs || rateLimitWaits >= MAX_RATE_LIMIT_WAITS) {
          throw new GithubRateLimitedError(operation, resumeAt);
        }
        rateLimitWaits++;
        await this.clock.sleep(wait);
        await this.context(true); // another caller may have extended or lifted the wait
        continue;
      }

      // Checked before a token is read or minted: a credential goes only where it was created for.
      const url = buildUrl(ctx.apiBaseUrl, path, opts.query);
      refuseUnlessBound(ctx, url, operation);
      const authorization = auth.kind === "token" ? await this.auth.tokenAuthorization(operation) : await this.auth.appJwtAuthorization();
      if (opts.sendBy !== undefined && this.clock.now() >= opts.sendBy) {
        // GitHub failing is the news, not the deadline: paying again would not help.
        if (lastFailure) throw new GithubUnavailableError(operation, lastFailure.status, serverAttempts, lastFailure.detail);
        throw new GithubSendDeadlineError(operation, opts.sendBy);
      }
      const started = this.clock.now();
      let res: Response;
      try {
        res = await this.fetchFn(url, {
          method,
          headers: {
            accept: "application/vnd.github+json",
            authorization,
            "user-agent": USER_AGENT,
            "x-github-api-version": GITHUB_API_VERSION,
            ...(opts.body !== undefined && { "content-type": "application/json" }),
          },
          body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (err) {
        serverAttempts++;
        const detail = err instanceof Error ? err.message : String(err);
        logCall({
          credential: this.credentialId,
          operation,
          method,
          status: null,
          remaining: null,
          started,
          now: this.clock.now(),
          ok: false,
          error: detail,
        });
        if (serverAttempts >= this.maxAttempts) throw new GithubUnavailableError(operation, null, serverAttempts, detail);
        lastFailure = { status: null, detail };
        await this.clock.sleep(serverErrorBackoff(serverAttempts, this.clock.random()));
        continue;
      }

      const snapshot = parseRateLimit(res.headers);
      logCall({
        credential: this.credentialId,
        operation,
        method,
        status: res.status,
        remaining: snapshot?.remaining ?? null,
        started,
        now: this.clock.now(),
        ok: (res.status >= 200 && res.status < 300) || !!opts.allow?.includes(res.status),
      });
      const data = await readBody(res);
      const message = typeof data === "object" && data && "message" in data ? String((data as { message: unknown }).message) : "";

      if (res.status === 401) {
        if (auth.kind === "token" && ctx.credential.authType === "app" && !retriedWithFreshToken) {
          // An installation token can be revoked before it expires; one fresh token settles it.
          retriedWithFreshToken = true;
          await this.auth.dropToken();
          continue;
        }
        await this.markFailing(`${res.status} ${message || "Bad credentials"}`);
        throw new GithubCredentialFailingError(this.credentialId, message || "Bad credentials");
      }

      if (isRateLimited(res.status, res.headers, message)) {
        // Before the wait is recorded: a refusal that arrives while the credential already waits
        // out another is part of the same lesson.
        if (isSecondaryLimit(res.status, res.headers, message)) {
          await learnFromSecondaryLimit(this.options.env.DB, this.credentialId, this.budget, this.clock.now());
        }
        const strikes = ctx.state?.rateLimitStrikes ?? 0;
        const { until, hinted } = rateLimitedUntil({ now: this.clock.now(), headers: res.headers, strikes });
        await this.saveState({
          ...rateLimitPatch(snapshot, this.clock.now()),
          blockedUntil: Math.max(until, ctx.state?.blockedUntil ?? 0),
          rateLimitStrikes: hinted ? 0 : strikes + 1,
        });
        logEvent({
          event: "github_rate_limited",
          credential: this.credentialId,
          operation,
          status: res.status,
          until: new Date(until).toISOString(),
        });
        continue;
      }

      // A 5xx the operation handles itself (Gitea's 500 for a runner that does not exist) is its answer, not an outage.
      if (res.status >= 500 && !opts.allow?.includes(res.status)) {
        serverAttempts++;
        await this.observe(snapshot);
        if (serverAttempts >= this.maxAttempts) {
          throw new GithubUnavailableError(operation, res.status, serverAttempts, message || `HTTP ${res.status}`);
        }
        lastFailure = { status: res.status, detail: message || `HTTP ${res.status}` };
        await this.clock.sleep(serverErrorBackoff(serverAttempts, this.clock.random()));
        continue;
      }

      await this.observe(snapshot, (ctx.state?.rateLimitStrikes ?? 0) > 0 ? { rateLimitStrikes: 0 } : {});
      if ((res.status >= 200 && res.status < 300) || opts.allow?.includes(res.status)) {
        return { status: res.status, data: data as T, headers: res.headers };
      }
      const docs =
        typeof data === "object" && data && "documentation_url" in data
          ? String((data as { documentation_url: unknown }).documentation_url)
          : undefined;
      throw new GithubApiError(operation, res.status, message || `HTTP ${res.status}`, docs);
    }
  }

  /** Records rate-limit figures: in memory always, in D1 when stale, low, or other fields change. */
  private async observe(snapshot: RateLimitSnapshot | null, extra: StatePatch = {}) {
    const now = this.clock.now();
    const stored = this.ctx?.state?.rateLimitObservedAt ?? 0;
    const due = snapshot !== null && (now - stored >= RATE_LIMIT_PERSIST_INTERVAL_MS || isLow(snapshot));
    if (due || Object.keys(extra).length) {
      await this.saveState({ ...(snapshot ? rateLimitPatch(snapshot, now) : {}), ...extra });
    } else if (snapshot && this.ctx?.state) {
      Object.assign(this.ctx.state, rateLimitPatch(snapshot, now), { rateLimitObservedAt: stored });
    }
  }

  /** Returns false when the credential changed meanwhile (the write is then dropped). */
  private async saveState(patch: StatePatch): Promise<boolean> {
    const ctx = await this.context();
    const now = this.clock.now();
    const written = await writeCredentialState(this.options.env.DB, ctx.credential, patch, now);
    ctx.state = {
      credentialId: this.credentialId,
      health: "ok",
      failureReason: null,
      failedAt: null,
      rateLimitLimit: null,
      rateLimitRemaining: null,
      rateLimitUsed: null,
      rateLimitResetAt: null,
      rateLimitResource: null,
      rateLimitObservedAt: null,
      blockedUntil: null,
      rateLimitStrikes: 0,
      tokenEnc: null,
      tokenExpiresAt: null,
      ...ctx.state,
      ...patch,
      updatedAt: now,
    };
    return written;
  }

  private async markFailing(reason: string) {
    this.auth.clearToken();
    const recorded = await this.saveState({
      health: "failing",
      failureReason: reason.slice(0, 500),
      failedAt: this.clock.now(),
      tokenEnc: null,
      tokenExpiresAt: null,
    });
    // Not recorded: the credential was replaced while this call used the old one.
    logEvent({ event: "github_credentials_failing", credential: this.credentialId, reason, recorded, error: reason });
  }
}

function rateLimitPatch(s: RateLimitSnapshot | null, now: number): StatePatch {
  if (!s) return {};
  return {
    rateLimitLimit: s.limit,
    rateLimitRemaining: s.remaining,
    rateLimitUsed: s.used,
    rateLimitResetAt: s.resetAt,
    rateLimitResource: s.resource,
    rateLimitObservedAt: now,
  };
}

async function readBody(res: Response): Promise<unknown> {
  if (res.status === 204 || res.status === 304) return null;
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 200) };
  }
}
