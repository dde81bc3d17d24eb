import { createRoute, z } from "@hono/zod-openapi";
import { runDoctor } from "../doctor/gather/run-doctor";
import { DoctorReportSchema } from "../doctor/report";
import { errorResponses, jsonResponse, notFoundResponse } from "../http/openapi";
import { requireFound } from "../http/require-found";
import { createRouter } from "../http/router";

/**
 * `GET /doctor`: the setup check (src/doctor/). Reads only, so a read token may run it; it
 * calls GitHub, the shims and the scale set objects, each briefly, and never returns a secret.
 */

const DoctorQuery = z.object({
  scaleset: z
    .uuid()
    .optional()
    .openapi({ description: "Only this scale set and what it stands on: its entity, their credentials, its provider, the configuration" }),
});

export const doctorRoutes = createRouter().openapi(
  createRoute({
    method: "get",
    path: "/doctor",
    tags: ["Doctor"],
    summary: "Check every link a runner depends on, and say what to fix",
    description:
      "The configuration (PUBLIC_URL, secrets, Access), each GitHub credential (health, App permissions, PAT scopes), each " +
      "entity's access and webhook (GitHub's view of the hook and its last delivery), each provider shim (capabilities, " +
      "signature), each scale set (what it stands on, create failures, whether a runner ever came up, its runs-on labels) " +
      "and the queued jobs no scale set took. Every outside call is a harmless read with a short timeout. `ok` is false " +
      "when any check failed.",
    request: { query: DoctorQuery },
    responses: { 200: jsonResponse(DoctorReportSchema, "The report"), ...errorResponses, ...notFoundResponse },
  }),
  async (c) => {
    const { scaleset } = c.req.valid("query");
    const report = await runDoctor(c.env, { scaleSetId: scaleset, requestUrl: c.req.url });
    return c.json(requireFound(report, "scale set", scaleset ?? ""), 200);
  },
);
