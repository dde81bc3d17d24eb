import {
  GithubApiError,
  GithubCredentialElsewhereError,
  GithubCredentialFailingError,
  GithubError,
  GithubRateLimitedError,
  GithubUnavailableError,
} from "../github/errors";
import { ApiError } from "./errors";

/**
 * What an admin caller should see when GitHub did not do what a route asked: 409 for
 * credentials GitHub refuses (fix them first) or that were not sent because their endpoint
 * no longer points where they were created for, 503 with Retry-After while rate limited,
 * 502 for GitHub's own errors (with GitHub's status and message).
 */
export function githubFailure(err: unknown, hint?: (status: number) => string | undefined): ApiError {
  if (err instanceof GithubCredentialFailingError) {
    return new ApiError(
      409,
      "GitHub refuses these credentials; update them to retry",
      { credentials_id: err.credentialId, reason: err.reason },
      { code: "credentials_refused" },
    );
  }
  if (err instanceof GithubCredentialElsewhereError) {
    return new ApiError(
      409,
      "not sent: these credentials go only to the API URL they were created for, and their endpoint now points elsewhere",
      {
        credentials_id: err.credentialId,
        bound_api_url: err.boundApiUrl,
        url: err.url,
        next: "point the endpoint's api_base_url back at bound_api_url (PUT /github/endpoints/{name}), or delete the credentials and add them again",
      },
    );
  }
  if (err instanceof GithubRateLimitedError) {
    return new RetryLaterError(err.retryAt);
  }
  if (err instanceof GithubUnavailableError) {
    return new ApiError(502, "GitHub is unavailable", { github_status: err.status, attempts: err.attempts });
  }
  if (err instanceof GithubApiError) {
    const h = hint?.(err.status);
    return new ApiError(502, "GitHub refused the request", {
      github_status: err.status,
      github_message: err.githubMessage,
      ...(h && { hint: h }),
    });
  }
  if (err instanceof GithubError) return new ApiError(502, err.message);
  throw err;
}

/** 503 plus the time GitHub lets these credentials be used again. */
export class RetryLaterError extends ApiError {
  constructor(readonly retryAt: number) {
    super(
      503,
      "GitHub rate limit: try again later",
      { retry_at: new Date(retryAt).toISOString() },
      {
        code: "upstream_rate_limited",
        headers: { "retry-after": String(Math.max(1, Math.ceil((retryAt - Date.now()) / 1000))) },
      },
    );
  }
}
