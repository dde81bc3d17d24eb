import type { GithubBudgetPolicy } from "../github/budget";
import { measuredFetch } from "../lib/invocation-cost";

/**
 * A GitHub budget grant spent by the request that actually reaches GitHub (on-boot JIT mints,
 * jit-on-boot.ts). Pure: the paying itself (D1) is the caller's `pay`.
 */

/** Why paying again gave up: a busy answer for the machine. */
export interface BudgetStop {
  kind: "busy";
  retryAfterSeconds: number;
  reason: "github_budget" | "mint_under_way";
}

/**
 * The grant a mint holds: the end of the window it was paid in (0: none, or spent by a request
 * that left), and why paying again gave up, when it did.
 */
export interface BudgetTicket {
  windowEnd: number;
  stop: BudgetStop | null;
}

/** Whether a request is a JIT config mint (REST generate-jitconfig, or the scale set API's generatejitconfig). */
function isJitMint(input: RequestInfo | URL, init?: RequestInit): boolean {
  const url = input instanceof Request ? input.url : String(input);
  const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
  return method === "POST" && /jitconfig/i.test(url);
}

/**
 * A grant is good for a request that leaves before its window's last sixth (1 s of the default
 * 6): GitHub counts a call when it arrives, and the budget's worst minute (worstMinutePoints)
 * holds only if every call arrives in the window that paid for it.
 */
export function grantStillGood(windowEnd: number, now: number, policy: GithubBudgetPolicy): boolean {
  return windowEnd > 0 && now < windowEnd - policy.windowMs / 6;
}

/**
 * The fetch a budgeted mint's GitHub client sends through: each JIT request spends the ticket's
 * grant as it leaves, and pays again (waiting in line) when the grant is spent or stale. Under a
 * burst, the work between the grant and the request (D1 reads for the credential, the token) can
 * take seconds; without this, grants of several windows reached GitHub in one, and GitHub's
 * sliding minute saw more than the budget's worst minute. Other requests pass unbudgeted.
 */
export function budgetedOutbound(
  pay: () => Promise<BudgetStop | null>,
  ticket: BudgetTicket,
  policy: GithubBudgetPolicy,
  timing: { now: () => number },
  send: typeof fetch = measuredFetch,
): typeof fetch {
  return async (input, init) => {
    if (isJitMint(input, init)) {
      if (!grantStillGood(ticket.windowEnd, timing.now(), policy)) {
        const stop = await pay();
        // Thrown as a failed send: the client gives up after its attempts and the mint reports ticket.stop.
        if (stop) throw new Error(`github budget: ${stop.reason}`);
      }
      ticket.windowEnd = 0;
    }
    return send(input, init);
  };
}
