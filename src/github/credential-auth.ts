import { keyringFor } from "../crypto/keyring";
import { open, seal } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import type { CredentialContext, StatePatch } from "../db/github/github-state-store";
import type { Env } from "../env";
import type { Clock } from "../lib/clock";
import { logEvent } from "../observability/log";
import { createAppJwt, importAppKey } from "./app/app-auth";
import { GithubApiError, GithubCredentialFailingError } from "./errors";
import type { GithubResponse } from "./github-client";

/** An installation token is replaced this long before it expires. */
export const TOKEN_REFRESH_MARGIN_MS = 5 * 60_000;

/** What authenticating needs from the client: the credential and its shared state, and a call to GitHub as the App. */
export interface AuthHost {
  readonly credentialId: string;
  readonly clock: Clock;
  readonly env: Pick<Env, "DB" | "ENCRYPTION_KEY" | "ENCRYPTION_KEYS_PREVIOUS">;
  context(): Promise<CredentialContext>;
  saveState(patch: StatePatch): Promise<boolean>;
  markFailing(reason: string): Promise<void>;
  callAsApp<T>(operation: string, method: string, path: string): Promise<GithubResponse<T>>;
}

/**
 * How a GithubClient authenticates: the PAT, or a GitHub App's JWT and its installation token
 * (kept here, shared through D1 with every isolate, minted once for concurrent calls). Holds
 * the opened secrets of one credential version; `forget` drops them when the credential changes.
 */
export class CredentialAuth {
  private secret: string | null = null;
  private appKey: Promise<CryptoKey> | null = null;
  private token: { value: string; expiresAt: number } | null = null;
  private minting: Promise<string> | null = null;

  constructor(private readonly host: AuthHost) {}

  /** The operator changed the credential: nothing derived from the old one is good. */
  forget(): void {
    this.secret = null;
    this.appKey = null;
    this.token = null;
  }

  /** The credential is failing: its installation token is of no use. */
  clearToken(): void {
    this.token = null;
  }

  private async openSecret(): Promise<string> {
    if (this.secret === null) {
      const { credential } = await this.host.context();
      this.secret = await open(await keyringFor(this.host.env), credential.secretEnc, secretContext.credential(credential.id));
    }
    return this.secret;
  }

  /** `Bearer <App JWT>`: for the calls an App makes as itself (minting installation tokens). */
  async appJwtAuthorization(): Promise<string> {
    const { credential } = await this.host.context();
    if (!this.appKey) {
      const pending = this.openSecret().then(importAppKey);
      pending.catch(() => {
        if (this.appKey === pending) this.appKey = null;
      });
      this.appKey = pending;
    }
    const jwt = await createAppJwt({ appId: credential.appId ?? 0, key: await this.appKey, now: this.host.clock.now() });
    return `Bearer ${jwt}`;
  }

  /** `Bearer <token>`: the PAT, or the App installation's token. */
  async tokenAuthorization(operation: string): Promise<string> {
    const ctx = await this.host.context();
    // Gitea and Forgejo document `Authorization: token <token>` for their access tokens.
    if (ctx.credential.authType === "pat") return `${ctx.forge === "github" ? "Bearer" : "token"} ${await this.openSecret()}`;
    return `Bearer ${await this.installationToken(operation)}`;
  }

  /** The installation token: this object's, else the one in D1, else a newly minted one. */
  private async installationToken(operation: string): Promise<string> {
    const fresh = (expiresAt: number | null | undefined) => (expiresAt ?? 0) - TOKEN_REFRESH_MARGIN_MS > this.host.clock.now();
    if (this.token && fresh(this.token.expiresAt)) return this.token.value;
    const ctx = await this.host.context();
    const state = ctx.state;
    if (state?.tokenEnc && fresh(state.tokenExpiresAt)) {
      try {
        const value = await open(await keyringFor(this.host.env), state.tokenEnc, secretContext.installationToken(this.host.credentialId));
        this.token = { value, expiresAt: state.tokenExpiresAt! };
        return value;
      } catch {
        // Sealed under a key that is gone (rotation): a token is cheap to replace.
      }
    }
    // Concurrent calls on this object share one mint.
    if (!this.minting) {
      this.minting = this.mintInstallationToken(operation).finally(() => {
        this.minting = null;
      });
    }
    return this.minting;
  }

  private async mintInstallationToken(operation: string): Promise<string> {
    const { credential } = await this.host.context();
    let res: GithubResponse<{ token: string; expires_at: string }>;
    try {
      res = await this.host.callAsApp("create_installation_token", "POST", `/app/installations/${credential.installationId}/access_tokens`);
    } catch (err) {
      if (err instanceof GithubApiError && (err.status === 404 || err.status === 403)) {
        // The App is not installed there (any more), or lost access: retrying cannot help.
        const reason = `installation ${credential.installationId}: ${err.status} ${err.githubMessage}`;
        await this.host.markFailing(reason);
        throw new GithubCredentialFailingError(this.host.credentialId, reason);
      }
      throw err;
    }
    const value = res.data.token;
    const expiresAt = Date.parse(res.data.expires_at);
    if (typeof value !== "string" || !value || Number.isNaN(expiresAt)) {
      throw new GithubApiError(operation, res.status, "installation token response without token/expires_at");
    }
    this.token = { value, expiresAt };
    await this.host.saveState({
      tokenEnc: await seal(await keyringFor(this.host.env), value, secretContext.installationToken(this.host.credentialId)),
      tokenExpiresAt: expiresAt,
    });
    logEvent({ event: "github_installation_token_minted", credential: this.host.credentialId, expires_at: res.data.expires_at });
    return value;
  }

  /** The installation token was refused before it expired: forget it here and in D1. */
  async dropToken() {
    this.token = null;
    await this.host.saveState({ tokenEnc: null, tokenExpiresAt: null });
  }
}
