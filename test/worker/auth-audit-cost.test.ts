import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import type { Env } from "../../src/env";
import { ADMIN_TOKEN, api, seed, unique } from "./helpers";

/**
 * What authentication and the audit trail cost in D1, statement by statement: a named token is
 * one lookup by hash (then cached in the isolate), its last use one write at most a minute, an
 * admin write one audit insert, and a refused write one batch (its throttled insert and the count
 * of those the throttle drops). The statements are recorded as D1 sees them.
 */

const app = createApp();

function recordingD1(db: D1Database, seen: string[]): D1Database {
  const sqlOf = new WeakMap<object, string>();
  const wrap = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const wrapped = new Proxy(stmt, {
      get(target, prop, receiver) {
        if (prop === "bind") return (...args: unknown[]) => wrap(target.bind(...args), sql);
        if (prop === "run" || prop === "all" || prop === "first" || prop === "raw") {
          return (...args: unknown[]) => {
            seen.push(sql);
            return (target as any)[prop](...args);
          };
        }
        const v = Reflect.get(target, prop, receiver);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    sqlOf.set(wrapped, sql);
    return wrapped;
  };
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === "prepare") return (sql: string) => wrap(target.prepare(sql), sql);
      if (prop === "batch") {
        return (stmts: D1PreparedStatement[]) => {
          seen.push(`batch: ${stmts.map((st) => sqlOf.get(st) ?? "?").join(" ; ")}`);
          return target.batch(stmts);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

async function statementsOf(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; sql: string[] }> {
  const sql: string[] = [];
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`https://edgerunner.test${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    { ...env, DB: recordingD1(env.DB, sql) } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  await res.arrayBuffer();
  return { status: res.status, sql };
}

const about = (table: string) => (sql: string[]) => sql.filter((s) => s.includes(`"${table}"`) || s.includes(` ${table} `));

describe("the D1 cost of authentication and auditing", () => {
  it("looks a named token up once by hash, then not again while cached; writes its last use once", async () => {
    const { token } = (await api.post("/api/v1/tokens", { name: unique("cost"), scope: "read" })).body;
    const first = await statementsOf("GET", "/api/v1/providers", token);
    expect(first.status).toBe(200);
    const tokenSql = about("api_tokens")(first.sql);
    expect(tokenSql.filter((s) => /^select/i.test(s))).toHaveLength(1);
    expect(tokenSql.filter((s) => /^update/i.test(s))).toHaveLength(1);
    const again = await statementsOf("GET", "/api/v1/providers", token);
    expect(again.status).toBe(200);
    expect(about("api_tokens")(again.sql)).toEqual([]);
    // ADMIN_TOKEN costs no D1 at all.
    const admin = await statementsOf("GET", "/api/v1/providers", ADMIN_TOKEN);
    expect(admin.sql.length).toBe(again.sql.length);
  });

  it("adds exactly one insert to a write, and none to a read", async () => {
    const provider = await seed.provider();
    const write = await statementsOf("PUT", `/api/v1/providers/${provider.name}`, ADMIN_TOKEN, { description: "x" });
    expect(write.status).toBe(200);
    expect(about("audit_log")(write.sql)).toHaveLength(1);
    expect(about("audit_log")(write.sql)[0]).toMatch(/^insert into "audit_log"/i);
    const read = await statementsOf("GET", `/api/v1/providers/${provider.name}`, ADMIN_TOKEN);
    expect(about("audit_log")(read.sql)).toEqual([]);
  });

  it("adds one batch to a refused write: the throttled insert and its count, one round trip", async () => {
    const { token } = (await api.post("/api/v1/tokens", { name: unique("cost-ro"), scope: "read" })).body;
    expect((await statementsOf("GET", "/api/v1/providers", token)).status).toBe(200); // the token is now cached, its use written
    const refused = await statementsOf("POST", "/api/v1/providers", token, { name: "x".repeat(4_000) });
    expect(refused.status).toBe(403);
    expect(refused.sql).toHaveLength(1);
    expect(refused.sql[0]).toMatch(/^batch: INSERT INTO counters [^;]* ; INSERT INTO audit_log /);
  });
});
