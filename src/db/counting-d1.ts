import { countD1 } from "../lib/invocation-cost";

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
  return counted(db, countD1);
}

function counted(db: D1Database, count: (statements: number) => void): D1Database {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === "batch" || prop === "exec") {
        return (...args: unknown[]) => {
          count(prop === "batch" ? (args[0] as unknown[]).length : 1);
          return (target as any)[prop](...args);
        };
      }
      if (prop === "prepare") {
        return (sql: string) => {
          const stmt = target.prepare(sql);
          return wrapStatement(stmt, count);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

function wrapStatement(stmt: D1PreparedStatement, count: (statements: number) => void): D1PreparedStatement {
  return new Proxy(stmt, {
    get(target, prop, receiver) {
      if (prop === "run" || prop === "all" || prop === "first" || prop === "raw") {
        return (...args: unknown[]) => {
          count(1);
          return (target as any)[prop](...args);
        };
      }
      // A bound statement is a new one: it must count too.
      if (prop === "bind") return (...args: unknown[]) => wrapStatement(target.bind(...args), count);
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}
