import { defineConfig } from "drizzle-kit";

// Generates SQL migrations from src/db/schema.ts into migrations/, where
// `wrangler d1 migrations apply` and the tests pick them up.
export default defineConfig({
  dialect: "sqlite",
  schema: ["./src/db/schema.ts", "./src/db/recovery/schema.ts", "./src/db/metrics/usage-schema.ts"],
  out: "./migrations",
});
