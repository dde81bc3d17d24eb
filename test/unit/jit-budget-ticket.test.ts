import { describe, expect, it } from "vitest";
import { DEFAULT_GITHUB_BUDGET } from "../../src/github/budget";
import { type BudgetStop, type BudgetTicket, budgetedOutbound, grantStillGood } from "../../src/scaleset/jit-budget-ticket";

// An on-boot mint's JIT request spends its budget grant as it leaves for GitHub. Without this, a
// grant paid at a window's start whose request left seconds later (D1 and token work under a
// burst) reached GitHub in a later window, on top of that window's own grants: 100 secondary-limit
// 403s in the 1,000-job production bench.

const JIT_URL = "https://api.github.com/orgs/o/actions/runners/generate-jitconfig";
const WINDOW = DEFAULT_GITHUB_BUDGET.windowMs;

function world(startAt: number, windowEnd: number) {
  let now = startAt;
  const events: string[] = [];
  const ticket: BudgetTicket = { windowEnd, stop: null };
  let stopWith: BudgetStop | null = null;
  const pay = async () => {
    events.push(`pay@${now}`);
    if (stopWith) {
      ticket.stop = stopWith;
      return stopWith;
    }
    ticket.windowEnd = (Math.floor(now / WINDOW) + 1) * WINDOW;
    return null;
  };
  const send = (async (input: RequestInfo | URL, init?: RequestInit) => {
    events.push(`${init?.method ?? "GET"} ${String(input).split("/").at(-1)}@${now}`);
    return new Response("{}", { status: 201 });
  }) as typeof fetch;
  const outbound = budgetedOutbound(pay, ticket, DEFAULT_GITHUB_BUDGET, { now: () => now }, send);
  return {
    events,
    ticket,
    outbound,
    at: (t: number) => {
      now = t;
    },
    refuse: (stop: BudgetStop) => {
      stopWith = stop;
    },
  };
}

describe("budgetedOutbound", () => {
  it("sends a JIT request on a fresh grant without paying again", async () => {
    const w = world(WINDOW * 10 + 100, WINDOW * 11);
    await w.outbound(JIT_URL, { method: "POST" });
    expect(w.events).toEqual([`POST generate-jitconfig@${WINDOW * 10 + 100}`]);
    expect(w.ticket.windowEnd).toBe(0);
  });

  it("pays again before a JIT request whose grant's window is over or nearly over", async () => {
    const w = world(0, WINDOW * 11);
    w.at(WINDOW * 12 + 4_000); // paid in window 10, leaving in window 12
    await w.outbound(JIT_URL, { method: "POST" });
    w.at(WINDOW * 14 - 500); // paid in window 13, leaving in its last sixth
    w.ticket.windowEnd = WINDOW * 14;
    await w.outbound(JIT_URL, { method: "POST" });
    expect(w.events).toEqual([
      `pay@${WINDOW * 12 + 4_000}`,
      `POST generate-jitconfig@${WINDOW * 12 + 4_000}`,
      `pay@${WINDOW * 14 - 500}`,
      `POST generate-jitconfig@${WINDOW * 14 - 500}`,
    ]);
  });

  it("makes every further attempt of the JIT call (a retry) pay for itself", async () => {
    const w = world(WINDOW * 10 + 100, WINDOW * 11);
    await w.outbound(JIT_URL, { method: "POST" });
    await w.outbound(JIT_URL, { method: "POST" });
    expect(w.events).toEqual([
      `POST generate-jitconfig@${WINDOW * 10 + 100}`,
      `pay@${WINDOW * 10 + 100}`,
      `POST generate-jitconfig@${WINDOW * 10 + 100}`,
    ]);
  });

  it("sends nothing when paying again gives up, and keeps why", async () => {
    const w = world(WINDOW * 10 + 100, 0);
    const stop: BudgetStop = { kind: "busy", retryAfterSeconds: 4, reason: "github_budget" };
    w.refuse(stop);
    await expect(w.outbound(JIT_URL, { method: "POST" })).rejects.toThrow(/github budget/);
    expect(w.events).toEqual([`pay@${WINDOW * 10 + 100}`]);
    expect(w.ticket.stop).toEqual(stop);
  });

  it("lets other requests (reads, deletes, the scale set API's other calls) pass unbudgeted", async () => {
    const w = world(WINDOW * 10 + 100, 0);
    await w.outbound("https://api.github.com/orgs/o/actions/runners?name=x");
    await w.outbound("https://api.github.com/orgs/o/actions/runners/7", { method: "DELETE" });
    expect(w.events).toEqual([`GET runners?name=x@${WINDOW * 10 + 100}`, `DELETE 7@${WINDOW * 10 + 100}`]);
  });
});

describe("grantStillGood", () => {
  it("holds until the window's last sixth", () => {
    expect(grantStillGood(WINDOW, WINDOW - 1_001, DEFAULT_GITHUB_BUDGET)).toBe(true);
    expect(grantStillGood(WINDOW, WINDOW - 1_000, DEFAULT_GITHUB_BUDGET)).toBe(false);
    expect(grantStillGood(0, 0, DEFAULT_GITHUB_BUDGET)).toBe(false);
  });
});
