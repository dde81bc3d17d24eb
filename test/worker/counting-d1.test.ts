import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { countingD1 } from "../../src/db/counting-d1";

describe("countingD1", () => {
  it("counts one round trip per statement run, none for preparing or binding", async () => {
    const trips = { n: 0 };
    const db = countingD1(env.DB, trips);
    const stmt = db.prepare("SELECT ?1 AS v");
    const bound = stmt.bind(7);
    expect(trips.n).toBe(0);
    expect(await bound.first()).toEqual({ v: 7 });
    expect((await bound.all()).results).toEqual([{ v: 7 }]);
    expect(await bound.raw()).toEqual([[7]]);
    await db.prepare("SELECT 1").run();
    expect(trips.n).toBe(4);
  });

  it("counts a batch as one round trip however many statements it holds, and its statements run for real", async () => {
    const trips = { n: 0, statements: 0 };
    const db = countingD1(env.DB, trips);
    const results = await db.batch(Array.from({ length: 5 }, (_, i) => db.prepare("SELECT ?1 AS v").bind(i)));
    expect(results.map((r) => r.results[0])).toEqual([0, 1, 2, 3, 4].map((v) => ({ v })));
    expect(trips).toEqual({ n: 1, statements: 5 });
    await db.exec("SELECT 1");
    await db.prepare("SELECT 2").first();
    expect(trips).toEqual({ n: 3, statements: 7 });
  });

  it("passes everything else through to D1", async () => {
    const trips = { n: 0 };
    const db = countingD1(env.DB, trips);
    expect(typeof db.withSession).toBe("function");
    expect(trips.n).toBe(0);
  });
});
