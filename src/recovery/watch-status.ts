import {
  GithubApiError,
  GithubCredentialElsewhereError,
  GithubCredentialFailingError,
  GithubRateLimitedError,
  GithubUnavailableError,
} from "../github/errors";
import type { PassTrouble } from "./pass-timing";

/**
 * What a failed look at a hook (or the backstop's listings) means for its watch, and what to say
 * about it. `forbidden` and `not_found` on a hook's deliveries mean the backstop takes over for
 * its entity (watch-list.ts); the others are passing trouble, tried again next pass.
 */
export interface WatchProblem {
  status: "forbidden" | "not_found" | "rate_limited" | "failing" | "unreachable" | "budget" | "error";
  detail: string;
  /** Passing trouble at GitHub (down, or rate limited until `until`): the next pass comes sooner (pass-timing.ts). */
  trouble: PassTrouble | null;
}

export function watchProblem(err: unknown): WatchProblem {
  if (err instanceof GithubApiError) {
    if (err.status === 403) return { status: "forbidden", detail: `403 ${err.githubMessage}`, trouble: null };
    if (err.status === 404) return { status: "not_found", detail: `404 ${err.githubMessage}`, trouble: null };
    return { status: "error", detail: `${err.status} ${err.githubMessage}`, trouble: err.status >= 500 ? { until: null } : null };
  }
  if (err instanceof GithubRateLimitedError)
    return { status: "rate_limited", detail: `rate limited until ${new Date(err.retryAt).toISOString()}`, trouble: { until: err.retryAt } };
  if (err instanceof GithubCredentialFailingError)
    return { status: "failing", detail: `credentials failing: ${err.reason}`, trouble: null };
  if (err instanceof GithubCredentialElsewhereError) return { status: "failing", detail: err.message, trouble: null };
  if (err instanceof GithubUnavailableError) return { status: "unreachable", detail: err.message, trouble: { until: null } };
  if (err instanceof CallBudgetSpent) return { status: "budget", detail: err.message, trouble: null };
  return { status: "error", detail: err instanceof Error ? err.message : String(err), trouble: null };
}

/** What to tell a person who can fix a watch's problem (setup check, dashboard), or null for passing trouble. */
export function whatToDo(kind: "repository" | "organization" | "app", status: string): string | null {
  switch (status) {
    case "forbidden":
      return kind === "app"
        ? "GitHub refused to list the App's webhook deliveries: the App's own JWT reads them, so check the App's private key in these credentials"
        : `give the credentials read access to the ${kind}'s webhooks (a GitHub App: ${kind === "repository" ? "Repository" : "Organization"} permissions → Webhooks: read; a classic PAT: ${kind === "repository" ? "admin:repo_hook (or read:repo_hook)" : "admin:org_hook"}); until then the backstop looks for its queued jobs`;
    case "not_found":
      return kind === "app"
        ? "the App has no webhook GitHub can show: set its webhook URL to this coordinator's"
        : "GitHub does not show the hook to these credentials: check they may administer the webhooks, or install the webhook again (POST …/webhook)";
    case "no_hook":
      return "no webhook of this coordinator is on it: install one (POST …/webhook), or let the backstop look for its queued jobs";
    default:
      return null;
  }
}

/** A credential's calls for this pass are spent: the rest waits for the next pass. */
export class CallBudgetSpent extends Error {
  override name = "CallBudgetSpent";
}

/** GitHub calls per credential in one pass, so recovery never crowds out runners' calls. */
export class CallBudget {
  private readonly spent = new Map<string, number>();
  total = 0;
  constructor(private readonly perCredential: number) {}

  /** Counts one call for `credentialId`, or throws CallBudgetSpent when its share is gone. */
  take(credentialId: string): void {
    const n = this.spent.get(credentialId) ?? 0;
    if (n >= this.perCredential)
      throw new CallBudgetSpent(`this pass's ${this.perCredential} calls for these credentials are spent; the next pass goes on`);
    this.spent.set(credentialId, n + 1);
    this.total++;
  }

  left(credentialId: string): number {
    return this.perCredential - (this.spent.get(credentialId) ?? 0);
  }
}
