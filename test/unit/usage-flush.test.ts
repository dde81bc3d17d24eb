import { afterEach, describe, expect, it } from "vitest";
import { addUsageStatements, usageStatementCount } from "../../src/db/metrics/usage-store";
import { measure, noCost, usePlan } from "../../src/lib/invocation-cost";
import { peekTally, TALLY_UNITS, takeTally, tally } from "../../src/lib/usage-tally";
import { flushUsage } from "../../src/observability/op-counters";

/** Statements as the SQL and values they were bound with. */
const recorder = () => {
  const batches: { sql: string; values: unknown[] }[][] = [];
  const db = {
    prepare: (sql: string) => ({ bind: (...values: unknown[]) => ({ sql, values }) }),
    batch: async (statements: { sql: string; values: unknown[] }[]) => void batches.push(statements),
  };
  return { db, batches };
};

afterEach(() => {
  // The unit project's files share their modules: leave the tally and the plan as found.
  takeTally();
  usePlan("paid");
});

describe("usage_days: a row per day and cause", () => {
  it("makes a statement per cause, its units summed into their columns and the others zero", () => {
    const { db } = recorder();
    const statements = addUsageStatements(db, "2026-12-07", [
      ["d1_rows_written", "webhook", 3],
      ["worker_requests", "webhook", 1],
      ["d1_rows_written", "webhook", 2],
      ["do_requests", "alarm", 4],
    ]);
    expect(statements).toHaveLength(2);
    const row = (i: number) => Object.fromEntries(TALLY_UNITS.map((u, k) => [u, statements[i]!.values[2 + k]]));
    expect(statements[0]!.values.slice(0, 2)).toEqual(["2026-12-07", "webhook"]);
    expect(row(0)).toMatchObject({ d1_rows_written: 5, worker_requests: 1, do_requests: 0, subrequests: 0 });
    expect(statements[1]!.values.slice(0, 2)).toEqual(["2026-12-07", "alarm"]);
    expect(row(1)).toMatchObject({ do_requests: 4, d1_rows_written: 0 });
    expect(
      usageStatementCount([
        ["d1_rows_read", "api", 1],
        ["worker_requests", "api", 1],
        ["do_requests", "alarm", 1],
      ]),
    ).toBe(2);
  });

  it("writes what fits in the invocation's D1 queries a cause at a time, and keeps the other causes whole for later", async () => {
    takeTally();
    usePlan("free");
    for (const kind of ["webhook", "alarm", "api"]) {
      tally("d1_rows_written", kind, 2);
      tally("worker_requests", kind, 1);
    }
    const { db, batches } = recorder();
    // 47 of the Free plan's 50 queries spent: room for two statements after the one kept back.
    await measure({ ...noCost(), d1Queries: 47 }, () => flushUsage(db));
    expect(batches).toHaveLength(1);
    expect(batches[0]!.map((s) => s.values[1])).toEqual(["webhook", "alarm"]);
    expect(peekTally().sort()).toEqual([
      ["d1_rows_written", "api", 2],
      ["worker_requests", "api", 1],
    ]);
  });
});
