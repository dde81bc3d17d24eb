import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { ApiError, errorResponse, zodDetails } from "./errors";

/** A route group whose validation failures are 400s in the Error shape, with field-level details. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) {
        const body = result.target === "json";
        return errorResponse(
          c,
          new ApiError(400, `invalid request ${targetName(result.target)}`, zodDetails(result.error), {
            code: body ? "invalid_body" : "invalid_parameter",
          }),
        );
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
