import { tallyHere } from "./invocation-cost";

/**
 * A Durable Object's SQLite, metered: since January 2026 its rows read and written are billed
 * like D1's (each cursor counts them), so every statement is tallied for what caused it
 * (lib/usage-tally.ts). The cursor is read to the end here, which is what every caller does
 * anyway, so its counts are final when they are tallied.
 */
export interface SqlPort {
  exec<T extends Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]): { toArray(): T[] };
}

export function meteredSql(sql: SqlStorage): SqlPort {
  return {
    exec<T extends Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]) {
      const cursor = sql.exec<T>(query, ...bindings);
      const rows = cursor.toArray();
      tallyHere("do_rows_read", cursor.rowsRead);
      tallyHere("do_rows_written", cursor.rowsWritten);
      return { toArray: () => rows };
    },
  };
}

/**
 * A Durable Object storage call outside SQL that is billed as rows: each `setAlarm` is one row
 * written, and so is each key-value `put` (and each `get` one row read) on the SQLite backend.
 */
export function meterStorageRows(read: number, written: number): void {
  tallyHere("do_rows_read", read);
  tallyHere("do_rows_written", written);
}
