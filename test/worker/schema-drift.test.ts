import { env } from "cloudflare:workers";
import { is } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as access from "../../src/db/access/schema";
import * as budget from "../../src/db/budget/schema";
import * as directory from "../../src/db/directory/schema";
import * as github from "../../src/db/github/schema";
import * as jobs from "../../src/db/jobs/schema";
import * as metrics from "../../src/db/metrics/schema";
import * as providers from "../../src/db/providers/schema";
import * as recovery from "../../src/db/recovery/schema";
import * as retention from "../../src/db/retention/schema";
import * as runner from "../../src/db/runner/schema";
import * as scaleset from "../../src/db/scaleset/schema";

// The migrations since 0014 are written by hand, so nothing but this test holds them to what the
// drizzle schema declares (drizzle-kit compares the schema with its snapshot, never with a
// database): the migrated D1 must have every declared table, column and index, and nothing else.

// Every src/db/<aggregate>/schema.ts, as drizzle.config.ts reads them.
const schemaModules: Record<string, unknown>[] = [
  access,
  budget,
  directory,
  github,
  jobs,
  metrics,
  providers,
  recovery,
  retention,
  runner,
  scaleset,
];

// D1's and SQLite's own bookkeeping, and the migrations' record.
const platformTables = /^(_cf_|sqlite_|d1_migrations$)/;

interface TableShape {
  columns: Record<string, { type: string; notNull: boolean; primaryKey: boolean }>;
  indexes: Record<string, { unique: boolean; columns: string[]; partial: boolean }>;
  foreignKeys: string[];
}

function declared(): Record<string, TableShape> {
  const tables: Record<string, TableShape> = {};
  for (const module of schemaModules) {
    for (const value of Object.values(module)) {
      if (!is(value, SQLiteTable)) continue;
      const config = getTableConfig(value);
      const compositeKey = new Set(config.primaryKeys.flatMap((pk) => pk.columns.map((column) => column.name)));
      const shape: TableShape = { columns: {}, indexes: {}, foreignKeys: [] };
      for (const column of config.columns) {
        shape.columns[column.name] = {
          type: column.getSQLType(),
          notNull: column.notNull || column.primary || compositeKey.has(column.name),
          primaryKey: column.primary || compositeKey.has(column.name),
        };
        // drizzle-kit writes a column's `.unique()` as an index of this name.
        if (column.isUnique)
          shape.indexes[column.uniqueName ?? `${config.name}_${column.name}_unique`] = {
            unique: true,
            columns: [column.name],
            partial: false,
          };
      }
      for (const index of config.indexes) {
        shape.indexes[index.config.name] = {
          unique: index.config.unique,
          columns: index.config.columns.map((column) => (column as { name: string }).name),
          partial: index.config.where !== undefined,
        };
      }
      for (const fk of config.foreignKeys) {
        const ref = fk.reference();
        shape.foreignKeys.push(
          `${ref.columns.map((c) => c.name).join(",")} -> ${getTableConfig(ref.foreignTable).name}(${ref.foreignColumns.map((c) => c.name).join(",")}) on delete ${fk.onDelete ?? "no action"}`,
        );
      }
      shape.foreignKeys.sort();
      tables[config.name] = shape;
    }
  }
  return tables;
}

async function migrated(): Promise<Record<string, TableShape>> {
  const { results: names } = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all<{
    name: string;
  }>();
  const tables: Record<string, TableShape> = {};
  for (const { name } of names) {
    if (platformTables.test(name)) continue;
    const pragma = <T>(sql: string) => env.DB.prepare(sql).bind(name).all<T>();
    const columns = await pragma<{ name: string; type: string; not_null: number; pk: number }>(
      'SELECT name, type, "notnull" AS not_null, pk FROM pragma_table_info(?)',
    );
    const indexes = await pragma<{ name: string; is_unique: number; partial: number }>(
      "SELECT name, \"unique\" AS is_unique, partial FROM pragma_index_list(?) WHERE origin = 'c'",
    );
    const foreignKeys = await pragma<{ from: string; table: string; to: string; on_delete: string }>(
      'SELECT "from", "table", "to", on_delete FROM pragma_foreign_key_list(?)',
    );
    const shape: TableShape = { columns: {}, indexes: {}, foreignKeys: [] };
    for (const column of columns.results) {
      shape.columns[column.name] = {
        type: column.type.toLowerCase(),
        notNull: column.not_null === 1 || column.pk > 0,
        primaryKey: column.pk > 0,
      };
    }
    for (const index of indexes.results) {
      const { results: indexColumns } = await env.DB.prepare("SELECT name FROM pragma_index_info(?) ORDER BY seqno")
        .bind(index.name)
        .all<{ name: string }>();
      shape.indexes[index.name] = { unique: index.is_unique === 1, columns: indexColumns.map((c) => c.name), partial: index.partial === 1 };
    }
    for (const fk of foreignKeys.results) {
      shape.foreignKeys.push(`${fk.from} -> ${fk.table}(${fk.to}) on delete ${fk.on_delete.toLowerCase()}`);
    }
    shape.foreignKeys.sort();
    tables[name] = shape;
  }
  return tables;
}

describe("the migrated database", () => {
  it("has the tables, columns, indexes and foreign keys the drizzle schema declares, and no others", async () => {
    expect(await migrated()).toEqual(declared());
  });

  it.each([
    ["webhook_deliveries", "0028"],
    ["usage_days", "0032"],
  ])("keeps %s WITHOUT ROWID, which drizzle cannot declare (migration %s)", async (table) => {
    const row = await env.DB.prepare("SELECT sql FROM sqlite_master WHERE name = ?").bind(table).first<{ sql: string }>();
    expect(row?.sql).toMatch(/WITHOUT ROWID\s*$/i);
  });
});
