/**
 * D1 access for key rotation: every sealed value of the columns crypto/secret-contexts.ts lists,
 * read in one round trip and replaced in one. Table and column names come from that fixed list,
 * never from a request, so they are spelled into the SQL.
 */

/** A column holding sealed values, with the column that identifies its rows. */
export interface SealedColumn {
  table: string;
  key: string;
  column: string;
}

export interface SealedValue {
  id: string;
  sealed: string;
}

/** The sealed values of each column (in the order given); rows without one are left out. */
export async function readSealedValues(db: D1Database, columns: readonly SealedColumn[]): Promise<SealedValue[][]> {
  const reads = await db.batch<SealedValue>(
    columns.map((s) => db.prepare(`SELECT ${s.key} AS id, ${s.column} AS sealed FROM ${s.table} WHERE ${s.column} IS NOT NULL`)),
  );
  return reads.map((r) => r.results);
}

/**
 * Replaces sealed values, each only while the row still holds the exact value read, so a
 * concurrent update is never overwritten. One batch (one transaction).
 */
export async function replaceSealedValues(
  db: D1Database,
  replacements: { column: SealedColumn; id: string; read: string; resealed: string }[],
): Promise<void> {
  if (!replacements.length) return;
  await db.batch(
    replacements.map(({ column: s, id, read, resealed }) =>
      db.prepare(`UPDATE ${s.table} SET ${s.column} = ? WHERE ${s.key} = ? AND ${s.column} = ?`).bind(resealed, id, read),
    ),
  );
}
