import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { countingD1 } from "../../src/db/counting-d1";
import { overview } from "../../src/db/dashboard/overview-queries";
import type { Env } from "../../src/env";
import { takeTally } from "../../src/lib/usage-tally";
import { createSession, SESSION_COOKIE } from "../../src/ui/session";
import { ADMIN_TOKEN, usageRow } from "./helpers";

/**
 * The overview's "Cloudflare usage this month": the month's rows of usage_days priced on each
 * plan, read in the overview's one D1 batch. The page is asked through the app itself so the
 * test can say which plan the deployment is on and see every D1 round trip it makes.
 */

const app = createApp();

/** A D1 handle that records each round trip as the statements it carried. */
function recordingD1(db: D1Database, trips: string[][]): D1Database {
  const sqlOf = new WeakMap<object, string>();
  const wrap = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const wrapped = new Proxy(stmt, {
      get(target, prop, receiver) {
        if (prop === "bind") return (...args: unknown[]) => wrap(target.bind(...args), sql);
        if (prop === "run" || prop === "all" || prop === "first" || prop === "raw") {
          return (...args: unknown[]) => {
            trips.push([sql]);
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
          trips.push(stmts.map((st) => sqlOf.get(st) ?? "?"));
          return target.batch(stmts);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

async function overviewPage(plan: string | undefined): Promise<{ html: string; trips: string[][] }> {
  const trips: string[][] = [];
  const { cookie } = await createSession(ADMIN_TOKEN);
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request("https://edgerunner.test/ui", { headers: { cookie: `${SESSION_COOKIE}=${cookie}` } }),
    { ...env, DB: recordingD1(env.DB, trips), CLOUDFLARE_PLAN: plan } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  expect(res.status).toBe(200);
  return { html: await res.text(), trips };
}

/** The section's text as a person reads it: tags dropped, cells and lines apart, entities decoded. */
function sectionText(html: string): string {
  const section = /<section id="usage">([\s\S]*?)<\/section>/.exec(html)?.[1] ?? "";
  return section
    .replace(/<\/(td|th)>/g, " | ")
    .replace(/<\/(tr|p|h2|h3|li)>/g, "\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .replace(/[ \t]+\n/g, "\n")
    .trim();
}

const cells = (html: string, unit: string) => {
  const row = new RegExp(`<tr data-unit="${unit}">([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? "";
  return [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!);
};

describe("the overview's Cloudflare usage this month", () => {
  it("shows each unit this month and today against the Free plan's daily limit, the Workers Paid bill, and what wrote the most", async () => {
    const now = Date.now();
    const today = new Date(now).toISOString().slice(0, 10);
    const month = today.slice(0, 7);
    const firstOfMonth = `${month}-01`;
    const lastMonth = new Date(Date.parse(`${firstOfMonth}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    // Earlier this month (unless today is the 1st): 300,000 D1 rows written, and 1.4 million
    // Durable Object requests, 400,000 past the million Workers Paid includes ($0.06 at $0.15 a million).
    const early = today !== firstOfMonth;
    const earlier = early ? 300_000 : 0;

    await env.DB.prepare("DELETE FROM usage_days").run();
    takeTally(); // nothing this isolate counted before comes into the figures
    await env.DB.batch([
      // Today: 85,000 D1 rows written, 85 % of the Free plan's 100,000 a day, by six causes.
      usageRow(today, "d1_rows_written", "reconcile", 50_000),
      usageRow(today, "d1_rows_written", "listener", 20_000),
      usageRow(today, "d1_rows_written", "webhook", 9_000),
      usageRow(today, "d1_rows_written", "alarm", 3_000),
      usageRow(today, "d1_rows_written", "retention", 2_000),
      usageRow(today, "d1_rows_written", "dashboard", 1_000),
      usageRow(today, "d1_rows_read", "reconcile", 1_200_000),
      usageRow(today, "worker_requests", "webhook", 4_000),
      usageRow(today, "do_requests", "alarm", 6_000),
      usageRow(today, "do_active_ms", "alarm", 8_000_000), // 1,000 GB-s at 128 MB
      usageRow(today, "subrequests", "reconcile", 7_000),
      ...(early
        ? [usageRow(firstOfMonth, "d1_rows_written", "reconcile", earlier), usageRow(firstOfMonth, "do_requests", "alarm", 1_400_000)]
        : []),
      // Last month's: not this month's.
      usageRow(lastMonth, "d1_rows_written", "reconcile", 9_000_000),
    ]);

    const { html, trips } = await overviewPage("free");
    const text = sectionText(html);
    // Placed after the charts, before the scale sets.
    expect(html.indexOf('id="runners-chart"')).toBeLessThan(html.indexOf('<section id="usage">'));
    expect(html.indexOf('<section id="usage">')).toBeLessThan(html.indexOf("<h2>Scale sets</h2>"));
    expect(text).toContain("Cloudflare usage this month");
    expect(text).toContain("This deployment says it is on the Free plan (CLOUDFLARE_PLAN=free).");

    // Unit | this month | today | Free plan daily limit | today's share | Workers Paid overage.
    const written = earlier + 85_000;
    expect(cells(html, "d1_rows_written")).toEqual([
      "D1 rows written",
      written.toLocaleString("en-US"),
      "85,000",
      "100,000",
      '<span class="badge warn">85 %</span>',
      "$0.00",
    ]);
    expect(cells(html, "do_requests")).toEqual([
      "Durable Object requests",
      early ? "1,406,000" : "6,000",
      "6,000",
      "100,000",
      "6 %",
      early ? "$0.06" : "$0.00",
    ]);
    expect(cells(html, "d1_rows_read")).toEqual(["D1 rows read", "1,200,000", "1,200,000", "5,000,000", "24 %", "$0.00"]);
    expect(cells(html, "do_gb_s")).toEqual(["Durable Object duration (GB-s)", "1,000", "1,000", "13,000", "7 %", "$0.00"]);
    expect(cells(html, "worker_cpu_ms")).toEqual(["Worker CPU (ms)", "not counted", "not counted", "—", "—", "—"]);

    expect(text).toContain(
      early
        ? "On Workers Paid this month: $5.06 (the $5.00 base + $0.06 beyond the included amounts)."
        : "On Workers Paid this month: $5.00 (the $5.00 base + $0.00 beyond the included amounts).",
    );
    expect(text).toContain("On the Free plan: today's D1 rows written nears the daily limit (85,000 of 100,000, 85 %).");
    expect(html).toContain(
      '<span class="warn">On the Free plan: today&#39;s D1 rows written nears the daily limit (85,000 of 100,000, 85 %).</span>',
    );
    expect(text).toContain("Worker CPU time is not counted here; see docs/performance.md#what-it-costs.");

    // The five causes that wrote the most D1 rows this month, most first; the sixth is left out.
    const causes = [...(/<ol id="usage-causes"[^>]*>([\s\S]*?)<\/ol>/.exec(html)?.[1] ?? "").matchAll(/<li>([\s\S]*?)<\/li>/g)].map(
      (m) => m[1]!.split(":")[0],
    );
    expect(causes).toEqual(["reconcile", "listener", "webhook", "alarm", "retention"]);
    expect(text).toContain(
      `reconcile: ${(earlier + 50_000).toLocaleString("en-US")} D1 rows written (${Math.floor(((earlier + 50_000) / written) * 100)} % of the month's), 1,200,000 read`,
    );

    // Still one D1 round trip for the whole overview: the month's usage rides in its batch.
    const reads = trips.filter((t) => t.some((sql) => /^\s*SELECT/i.test(sql)));
    expect(reads).toHaveLength(1);
    expect(reads[0]!.some((sql) => sql.includes("FROM usage_days"))).toBe(true);
    expect(reads[0]!.some((sql) => sql.includes("FROM scale_sets s JOIN providers"))).toBe(true);
    const counted = { n: 0, statements: 0 };
    await overview(countingD1(env.DB, counted));
    expect(counted).toEqual({ n: 1, statements: 15 });
  });

  it("past a Free plan limit today: a bad badge; unset CLOUDFLARE_PLAN reads as Workers Paid", async () => {
    const today = new Date().toISOString().slice(0, 10);
    await env.DB.prepare("DELETE FROM usage_days").run();
    takeTally();
    await usageRow(today, "worker_requests", "webhook", 104_000).run();
    const { html } = await overviewPage(undefined);
    expect(cells(html, "worker_requests")[4]).toBe('<span class="badge bad">104 %</span>');
    const text = sectionText(html);
    expect(text).toContain("This deployment says it is on Workers Paid (CLOUDFLARE_PLAN is unset; paid is the default).");
    expect(text).toContain(
      "On the Free plan: today's Worker requests passes the daily limit (104,000 of 100,000, 104 %). Past a limit, Cloudflare refuses more of that until 00:00 UTC.",
    );
    expect(text).toContain("No D1 rows written this month yet.");
  });
});
