/**
 * The Actions service's admin token: a registration token from the REST API, exchanged at
 * `POST {api}/actions/runner-registration` (`Authorization: RemoteAuth <token>`) for the
 * service's URL and an admin JWT. Kept per credential and entity in the isolate, and replaced
 * a minute before the JWT's `exp` (actions/scaleset does the same), or at once after a 401.
 */

import { BodyTooLarge, readLimitedBody } from "../../http/limited-body";
import type { Clock } from "../../lib/clock";
import { errorText, logger } from "../../observability/log";
import { countGithubCall } from "../../observability/op-counters";
import type { ActionsError, ActionsResult } from "../../scaleset/listener/actions-port";
import { refuseUnlessBound } from "../credential-binding";
import {
  GithubApiError,
  GithubCredentialElsewhereError,
  GithubCredentialFailingError,
  GithubRateLimitedError,
  GithubUnavailableError,
} from "../errors";
import { type GithubClient, USER_AGENT } from "../github-client";
import { createRegistrationToken } from "../runners";
import { type GithubScope, scopeKey } from "../scope";
import { actionsError, adminConnectionSchema, jwtExpiresAt, MAX_ACTIONS_BODY_BYTES, parseBody } from "./wire";

export interface AdminConnection {
  serviceUrl: string;
  token: string;
  /** Unix ms. */
  expiresAt: number;
}

/** Replace the admin token this long before it expires. */
export const ADMIN_REFRESH_MARGIN_MS = 60_000;
/** When the JWT carries no readable `exp`, trust it this long. */
const UNKNOWN_EXPIRY_MS = 10 * 60_000;
/** The exchange is retried on 401/403 (a fresh registration token may not have reached the service yet). */
const EXCHANGE_ATTEMPTS = 3;
const EXCHANGE_BACKOFF_MS = 500;

interface Need {
  gh: GithubClient;
  scope: GithubScope;
  fetch: typeof fetch;
  clock: Clock;
}

/** The entity's URL on GitHub's web host, which the exchange registers against. */
export function configUrl(baseUrl: string, scope: GithubScope): string {
  const seg = encodeURIComponent;
  switch (scope.kind) {
    case "repository":
      return `${baseUrl}/${seg(scope.owner)}/${seg(scope.repo)}`;
    case "organization":
      return `${baseUrl}/${seg(scope.org)}`;
    case "enterprise":
      return `${baseUrl}/enterprises/${seg(scope.enterprise)}`;
  }
}

/** A REST failure while getting the registration token, as the listener acts on it. */
function restError(err: unknown): ActionsError {
  if (err instanceof GithubCredentialFailingError) return { kind: "unauthorized", message: err.message };
  if (err instanceof GithubRateLimitedError || err instanceof GithubUnavailableError) return { kind: "retryable", message: err.message };
  if (err instanceof GithubApiError) return { ...actionsError(err.status, null, err.message), message: err.message };
  if (err instanceof GithubCredentialElsewhereError) return { kind: "permanent", message: err.message };
  return { kind: "retryable", message: errorText(err) };
}

export class AdminTokens {
  private readonly held = new Map<string, AdminConnection>();
  private readonly pending = new Map<string, Promise<ActionsResult<AdminConnection>>>();

  /** A good admin connection: the held one, or a new exchange (`force`: the held one was refused). */
  async get(need: Need, force = false): Promise<ActionsResult<AdminConnection>> {
    const key = `${need.gh.credentialId}:${scopeKey(need.scope)}`;
    const held = this.held.get(key);
    if (!force && held && held.expiresAt - need.clock.now() > ADMIN_REFRESH_MARGIN_MS) return { ok: true, value: held };
    if (force && held) this.held.delete(key);
    let p = this.pending.get(key);
    if (!p) {
      p = this.exchange(need).finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    const r = await p;
    if (r.ok) this.held.set(key, r.value);
    return r;
  }

  /** Forgets every held token (tests; a credential that changed). */
  clear() {
    this.held.clear();
  }

  private async exchange(need: Need): Promise<ActionsResult<AdminConnection>> {
    let regToken: string;
    let ctx: Awaited<ReturnType<GithubClient["context"]>>;
    let exchangeUrl: string;
    try {
      ctx = await need.gh.context();
      exchangeUrl = `${ctx.apiBaseUrl}/actions/runner-registration`;
      // The registration token is the credential's to give: only to the API it was created for
      // (checked before minting one; the admin JWT then goes where that API's answer says).
      refuseUnlessBound(ctx, exchangeUrl, "actions_registration");
      regToken = (await createRegistrationToken(need.gh, need.scope)).token;
    } catch (err) {
      return { ok: false, error: restError(err) };
    }
    const body = JSON.stringify({ url: configUrl(ctx.baseUrl, need.scope), runner_event: "register" });
    let last: ActionsError = { kind: "retryable", message: "no attempt" };
    for (let attempt = 1; attempt <= EXCHANGE_ATTEMPTS; attempt++) {
      if (attempt > 1) await need.clock.sleep(EXCHANGE_BACKOFF_MS * attempt);
      const started = need.clock.now();
      let status = 0;
      let parsed: unknown;
      let oversized = false;
      try {
        const res = await need.fetch(exchangeUrl, {
          method: "POST",
          headers: { authorization: `RemoteAuth ${regToken}`, "content-type": "application/json", "user-agent": USER_AGENT },
          body,
          signal: AbortSignal.timeout(30_000),
        });
        status = res.status;
        parsed = parseBody(await readLimitedBody(res, MAX_ACTIONS_BODY_BYTES));
      } catch (err) {
        if (err instanceof BodyTooLarge) oversized = true;
        else last = { kind: "retryable", message: errorText(err) };
      }
      const tooLarge = `registration answer larger than ${MAX_ACTIONS_BODY_BYTES} bytes`;
      const good = !oversized && status >= 200 && status < 300;
      countGithubCall("actions_registration", need.gh.credentialId, good);
      logger[good ? "debug" : "warn"]({
        event: "actions_service_call",
        operation: "actions_registration",
        method: "POST",
        status,
        duration_ms: need.clock.now() - started,
        ...(!good && { error: oversized ? tooLarge : last.message }),
      });
      if (good) {
        const conn = adminConnectionSchema.safeParse(parsed);
        if (!conn.success) return { ok: false, error: { kind: "permanent", status, message: "registration answer has no url or token" } };
        const expiresAt = jwtExpiresAt(conn.data.token) ?? need.clock.now() + UNKNOWN_EXPIRY_MS;
        return { ok: true, value: { serviceUrl: conn.data.url, token: conn.data.token, expiresAt } };
      }
      // A success too large to read is no admin token, and another exchange would answer the same.
      if (oversized && status < 300) return { ok: false, error: { kind: "too_large", status, message: tooLarge } };
      if (status) last = actionsError(status, parsed, `registration exchange answered ${status}`);
      if (last.kind !== "unauthorized" && last.kind !== "retryable") break;
    }
    return { ok: false, error: last };
  }
}
