import { countD1, tallyHere } from "../lib/invocation-cost";

/**
 * A D1 handle that counts round trips, so each reconcile can report its own cost (and tests can
 * hold it constant). A round trip is one `batch`/`exec` on the database or one
 * `run`/`all`/`first`/`raw` on a statement; preparing and binding cost nothing. `statements`,
 * when given, counts the queries those round trips carried (each statement of a batch is one of
 * Cloudflare's 1,000 D1 queries per invocation).
 */
/** Round trips (`n`) and, when present, the statements they carried. */
export interface D1Counter {
  n: number;
  statements?: number;
}

export function countingD1(db: D1Database, counter: D1Counter): D1Database {
  return counted(db, (statements) => {
    counter.n++;
    if (counter.statements !== undefined) counter.statements += statements;
  });
}

/**
 * A D1 handle that counts every round trip into the invocation under way (lib/invocation-cost.ts),
 * whoever makes it: the object's env and the Worker's carry one, so the D1 reads of shared clients
 * count toward the invocation that awaited them.
 */
export function measuredD1(db: D1Database): D1Database {
  return counted(db, countD1, meterRows);
}

/**
 * D1's billing units, from the `meta` every result carries: the rows each statement read and
 * wrote, tallied for what caused them (lib/usage-tally.ts).
 */
function meterRows(meta: { rows_read?: number; rows_written?: number } | undefined): void {
  if (!meta) return;
  tallyHere("d1_rows_read", meta.rows_read ?? 0);
  tallyHere("d1_rows_written", meta.rows_written ?? 0);
}

type Meter = (meta: { rows_read?: number; rows_written?: number } | undefined) => void;

function counted(db: D1Database, count: (statements: number) => void, meter?: Meter): D1Database {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          count(statements.length);
          const results = await target.batch(statements);
          for (const r of results) meter?.(r.meta);
          return results;
        };
      }
      if (prop === "exec") {
        return (...args: unknown[]) => {
          count(1);
          return (target as any).exec(...args);
        };
      }
      if (prop === "prepare") {
        return (sql: string) => {
          const stmt = target.prepare(sql);
          return wrapStatement(stmt, sql, count, meter);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

/** `raw()` answered through `all()`, whose result has the `meta` raw() drops: safe where no two output columns can share a name. */
const joins = /\bjoin\b/i;

function wrapStatement(stmt: D1PreparedStatement, sql: string, count: (statements: number) => void, meter?: Meter): D1PreparedStatement {
  return new Proxy(stmt, {
    get(target, prop, receiver) {
      if (prop === "run" || prop === "all") {
        return async (...args: unknown[]) => {
          count(1);
          const res = await (target as any)[prop](...args);
          meter?.(res?.meta);
          return res;
        };
      }
      if (prop === "first") {
        return async (column?: string) => {
          count(1);
          if (!meter) return column === undefined ? target.first() : target.first(column);
          // D1's first() runs the whole statement too, and drops its meta.
          const res = await target.all<Record<string, unknown>>();
          meter(res.meta);
          const row = res.results[0];
          if (row === undefined) return null;
          if (column === undefined) return row;
          if (!(column in row)) throw new Error(`D1_COLUMN_NOTFOUND: Column not found (${column})`);
          return row[column];
        };
      }
      if (prop === "raw") {
        return async (options?: { columnNames?: boolean }) => {
          count(1);
          // drizzle reads typed selects with raw(), which drops `meta`. Rows keyed by column name
          // come back in column order, so all() answers the same arrays wherever no two columns
          // share a name, which only a join can do: those (admin reads, a shim callback's owner) count the rows they
          // return as read, the least they read.
          if (!meter || joins.test(sql)) {
            const rows = (await target.raw(options as any)) as unknown[][];
            meter?.({ rows_read: Math.max(0, rows.length - (options?.columnNames ? 1 : 0)) });
            return rows;
          }
          const res = await target.all<Record<string, unknown>>();
          meter(res.meta);
          const rows = res.results.map((r) => Object.values(r));
          if (options?.columnNames) return [res.results[0] ? Object.keys(res.results[0]) : [], ...rows];
          return rows;
        };
      }
      // A bound statement is a new one: it must count too.
      if (prop === "bind") return (...args: unknown[]) => wrapStatement(target.bind(...args), sql, count, meter);
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}
