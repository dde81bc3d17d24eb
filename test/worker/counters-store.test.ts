import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addToCounterStatement, setCounterStatement } from "../../src/db/metrics/counters-store";

const read = async (name: string) =>
  env.DB.prepare(`SELECT value, updated_at FROM counters WHERE name = ?`).bind(name).first<{ value: number; updated_at: number }>();

describe("counters store", () => {
  it("adds to a total, creating it on first use, and sets a gauge to its last value", async () => {
    await env.DB.batch([addToCounterStatement(env.DB, "calls|a", 2, 10), addToCounterStatement(env.DB, "calls|a", 3, 20)]);
    expect(await read("calls|a")).toEqual({ value: 5, updated_at: 20 });

    await env.DB.batch([setCounterStatement(env.DB, "desired|a", 7, 30)]);
    await env.DB.batch([setCounterStatement(env.DB, "desired|a", 4, 40)]);
    expect(await read("desired|a")).toEqual({ value: 4, updated_at: 40 });
  });
});
