import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { zodDetails } from "./errors";

/** A route group whose validation failures are `{error, details}` 400s. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) {
        return c.json({ error: `invalid request ${targetName(result.target)}`, details: zodDetails(result.error) }, 400);
      }
    },
  });
}

function targetName(target: string): string {
  switch (target) {
    case "json":
      return "body";
    case "param":
      return "path";
    default:
      return target;
  }
}

export type Router = ReturnType<typeof createRouter>;
