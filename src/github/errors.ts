/** What a GitHub call can end with besides an answer. Messages never include tokens. */

export class GithubError extends Error {
  override name = "GithubError";
}

/** GitHub answered with a status the operation does not handle. */
export class GithubApiError extends GithubError {
  override name = "GithubApiError";
  constructor(
    readonly operation: string,
    readonly status: number,
    message: string,
    readonly documentationUrl?: string,
  ) {
    super(`${operation}: GitHub answered ${status}: ${message}`);
  }
  /** GitHub's own message, without our prefix. */
  get githubMessage(): string {
    return this.message.replace(/^.*?GitHub answered \d+: /, "");
  }
}

/** GitHub kept failing (5xx or network) through every retry. */
export class GithubUnavailableError extends GithubError {
  override name = "GithubUnavailableError";
  constructor(
    readonly operation: string,
    readonly status: number | null,
    readonly attempts: number,
    detail: string,
  ) {
    super(`${operation}: GitHub unavailable after ${attempts} attempts (${detail})`);
  }
}

/** The credential is rate limited: nobody may use it before `retryAt` (unix ms). */
export class GithubRateLimitedError extends GithubError {
  override name = "GithubRateLimitedError";
  constructor(
    readonly operation: string,
    readonly retryAt: number,
  ) {
    super(`${operation}: credential is rate limited until ${new Date(retryAt).toISOString()}`);
  }
}

/** GitHub refused the credential (401, or an App installation that is gone): not used until it changes. */
export class GithubCredentialFailingError extends GithubError {
  override name = "GithubCredentialFailingError";
  constructor(
    readonly credentialId: string,
    readonly reason: string,
  ) {
    super(`GitHub credentials ${credentialId} are failing: ${reason}`);
  }
}

/**
 * The call was paid for out of the GitHub budget in a window that ended (or nearly) before it
 * could be sent (a slow path, or a wait on a rate limit): it was not sent. Sent late, GitHub would
 * count it on top of the next window's calls; the caller pays again instead.
 */
export class GithubSendDeadlineError extends GithubError {
  override name = "GithubSendDeadlineError";
  constructor(
    readonly operation: string,
    readonly sendBy: number,
  ) {
    super(`${operation}: not sent, its budget window ended at ${new Date(sendBy).toISOString()}`);
  }
}

/**
 * Not sent: the URL is not under the API URL the credential was stored for (its endpoint was
 * changed after, or the credential predates the record). Nothing was signed or sent; nothing
 * retried can help until the endpoint points where the credential was created for.
 */
export class GithubCredentialElsewhereError extends GithubError {
  override name = "GithubCredentialElsewhereError";
  constructor(
    readonly credentialId: string,
    readonly operation: string,
    /** Null for a credential stored before the binding was recorded. */
    readonly boundApiUrl: string | null,
    /** Where the call would have gone (origin and path, no query). */
    readonly url: string,
  ) {
    super(
      boundApiUrl === null
        ? `${operation}: not sent: GitHub credentials ${credentialId} record no API URL they were created for; add them again`
        : `${operation}: not sent: GitHub credentials ${credentialId} were created for ${boundApiUrl}, not ${url}`,
    );
  }
}
