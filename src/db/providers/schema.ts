import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, updatedAt } from "../columns";

export const providers = sqliteTable("providers", {
  id: text("id").primaryKey(),
  name: text("name").notNull().unique(),
  description: text("description").notNull().default(""),
  url: text("url").notNull(),
  secretEnc: text("secret_enc").notNull(),
  /** How long one shim call may take before the coordinator gives up on it. */
  timeoutSeconds: integer("timeout_seconds").notNull().default(30),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});
