import { defineConfig } from "drizzle-kit";

// Generates SQL migrations from each aggregate's tables (src/db/<aggregate>/schema.ts) into
// migrations/, where `wrangler d1 migrations apply` and the tests pick them up. Migrations 0014-0032
// were written by hand; migrations/meta/0029_snapshot.json is the schema as of the last of them, so
// `drizzle-kit generate` diffs against it and a schema without changes generates nothing. What
// drizzle cannot declare is applied by hand and absent from the snapshot: webhook_deliveries
// (migration 0028) and usage_days (0032) are WITHOUT ROWID. test/worker/schema-drift.test.ts holds the migrated database to the schema.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/*/schema.ts",
  out: "./migrations",
});
