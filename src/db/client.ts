import { drizzle } from "drizzle-orm/d1";
import type { Env } from "../env";
import { schema } from "./schema";

export type Db = ReturnType<typeof createDb>;

export function createDb(env: Pick<Env, "DB">) {
  return drizzle(env.DB, { schema });
}
