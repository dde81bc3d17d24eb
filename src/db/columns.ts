import { integer } from "drizzle-orm/sqlite-core";

// Timestamps are unix milliseconds; columns ending in `_enc` hold values sealed by
// crypto/secret-box.ts and are never returned by the API.

export const createdAt = () => integer("created_at").notNull();
export const updatedAt = () => integer("updated_at").notNull();
