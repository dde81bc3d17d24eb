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
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === "batch" || prop === "exec") {
        return (...args: unknown[]) => {
          counter.n++;
          if (counter.statements !== undefined) counter.statements += prop === "batch" ? (args[0] as unknown[]).length : 1;
          return (target as any)[prop](...args);
        };
      }
      if (prop === "prepare") {
        return (sql: string) => {
          const stmt = target.prepare(sql);
          return wrapStatement(stmt, counter);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

function wrapStatement(stmt: D1PreparedStatement, counter: D1Counter): D1PreparedStatement {
  return new Proxy(stmt, {
    get(target, prop, receiver) {
      if (prop === "run" || prop === "all" || prop === "first" || prop === "raw") {
        return (...args: unknown[]) => {
          counter.n++;
          if (counter.statements !== undefined) counter.statements++;
          return (target as any)[prop](...args);
        };
      }
      // A bound statement is a new one: it must count too.
      if (prop === "bind") return (...args: unknown[]) => wrapStatement(target.bind(...args), counter);
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}
