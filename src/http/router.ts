import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { errorResponse, zodDetails } from "./errors";

/** A route group whose validation failures are 400s in the one error shape (http/errors.ts). */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) {
        const target = targetName(result.target);
        return errorResponse(c, 400, `invalid request ${target}`, zodDetails(result.error), {
          code: target === "body" ? "invalid_body" : "invalid_request",
        });
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
