import { createRoute, z } from "@hono/zod-openapi";
import { conflictResponse, errorResponses, jsonBody, jsonResponse, noContent, notFoundResponse } from "./openapi";

/**
 * The list, create, show, update and delete routes of an admin resource: the same requests and
 * the same answers whatever the resource, so they are declared once and each route file says
 * only what differs (summaries, bodies, the view) and what its handlers do.
 */
export function resourceRoutes<
  Collection extends string,
  Item extends string,
  Params extends z.ZodObject,
  View extends z.ZodType,
>(resource: { collection: Collection; item: Item; tags: string[]; params: Params; view: View }) {
  const { collection, item, tags, params, view } = resource;
  return {
    list: (summary: string, description: string) =>
      createRoute({
        method: "get",
        path: collection,
        tags,
        summary,
        responses: { 200: jsonResponse(z.array(view), description), ...errorResponses },
      }),
    create: <Body extends z.ZodType>(summary: string, body: Body) =>
      createRoute({
        method: "post",
        path: collection,
        tags,
        summary,
        request: { body: jsonBody(body) },
        responses: { 201: jsonResponse(view, "Created"), ...errorResponses, ...conflictResponse },
      }),
    show: (summary: string, description: string) =>
      createRoute({
        method: "get",
        path: item,
        tags,
        summary,
        request: { params },
        responses: { 200: jsonResponse(view, description), ...errorResponses, ...notFoundResponse },
      }),
    /**
     * `renames`: the update may change the name, so it can clash with another (409).
     * `refusesInUse`: some changes are refused while other resources use this one (409).
     */
    update: <Body extends z.ZodType>(summary: string, body: Body, { renames = false, refusesInUse = false } = {}) =>
      createRoute({
        method: "put",
        path: item,
        tags,
        summary,
        request: { params, body: jsonBody(body) },
        responses: {
          200: jsonResponse(view, "Updated"),
          ...errorResponses,
          ...notFoundResponse,
          ...(renames || refusesInUse ? conflictResponse : {}),
        },
      }),
    remove: (summary: string) =>
      createRoute({
        method: "delete",
        path: item,
        tags,
        summary,
        request: { params },
        responses: { ...noContent, ...errorResponses, ...notFoundResponse, ...conflictResponse },
      }),
  };
}
