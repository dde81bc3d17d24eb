import { createRoute, z } from "@hono/zod-openapi";
import { createDb } from "../db/client";
import { type JobRow, jobPage } from "../db/jobs/job-store";
import { jobSources, jobStatuses } from "../db/jobs/schema";
import { decimalInt, errorResponses, iso, jsonResponse, Timestamp } from "../http/openapi";
import { createRouter } from "../http/router";

const JobSchema = z
  .object({
    id: z.int().openapi({ description: "GitHub's workflow job id (the runner request id when `source` is `scaleset_api`)" }),
    source: z.enum(jobSources).openapi({
      description: "`webhook`: a workflow_job delivery brought it; `scaleset_api`: a runner scale set's message queue did",
    }),
    entity_id: z
      .uuid()
      .nullable()
      .openapi({
        description:
          "The entity whose delivery brought the job: each entity keeps its own row of a job, so the same job reported by " +
          "a repository's hook and its organization's hook is listed twice. Null once that entity is deleted",
      }),
    run_id: z.int(),
    run_attempt: z.int(),
    name: z.string(),
    workflow_name: z.string().nullable(),
    repository: z.string(),
    owner: z.string(),
    labels: z.array(z.string()),
    status: z.enum(jobStatuses),
    conclusion: z.string().nullable(),
    runner_name: z.string().nullable(),
    scale_set_id: z.uuid().nullable().openapi({ description: "Null when no scale set matches the job's labels" }),
    matched: z.boolean(),
    problem: z
      .string()
      .nullable()
      .openapi({
        description:
          "Why intake could not take the job as it came: a scale set API queue item that failed validation (which fields, and why). " +
          "Such a row holds what of the item was readable; null for a job taken as it came",
      }),
    refusal: z.string().nullable().openapi({
      description:
        "Why its shaped scale set makes it no machine (a shape outside the scale set's bounds, a malformed shape label, no flavor that fits); null otherwise",
      example: "cpu=128 is above this scale set's 64",
    }),
    queued_at: Timestamp.nullable(),
    started_at: Timestamp.nullable(),
    completed_at: Timestamp.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Job");

const JobPageSchema = z
  .object({
    jobs: z.array(JobSchema),
    next_cursor: z.string().nullable().openapi({ description: "Pass as `cursor` for the next page; null on the last" }),
  })
  .openapi("JobPage");

const ListQuery = z.object({
  status: z.enum(jobStatuses).optional(),
  scaleset_id: z.uuid().optional(),
  unmatched: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional()
    .openapi({ description: "Only jobs no scale set matches" }),
  limit: decimalInt(1, 500).default(50),
  cursor: decimalInt(1, Number.MAX_SAFE_INTEGER).optional().openapi({ description: "`next_cursor` of the previous page" }),
});

const view = (r: JobRow): z.infer<typeof JobSchema> => ({
  id: r.id,
  source: r.source,
  entity_id: r.entityId,
  run_id: r.runId,
  run_attempt: r.runAttempt,
  name: r.name,
  workflow_name: r.workflowName,
  repository: r.repository,
  owner: r.owner,
  labels: r.labels,
  status: r.status,
  conclusion: r.conclusion,
  runner_name: r.runnerName,
  scale_set_id: r.scaleSetId,
  matched: r.scaleSetId !== null,
  problem: r.problem,
  refusal: r.refusal ?? null,
  queued_at: iso(r.queuedAt),
  started_at: iso(r.startedAt),
  completed_at: iso(r.completedAt),
  created_at: iso(r.createdAt)!,
  updated_at: iso(r.updatedAt)!,
});

export const jobRoutes = createRouter().openapi(
  createRoute({
    method: "get",
    path: "/jobs",
    tags: ["Jobs"],
    summary: "List workflow jobs, the latest to arrive first",
    request: { query: ListQuery },
    responses: { 200: jsonResponse(JobPageSchema, "A page of jobs"), ...errorResponses },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const page = await jobPage(
      createDb(c.env),
      { status: q.status, scaleSetId: q.scaleset_id, unmatched: q.unmatched, before: q.cursor },
      q.limit,
    );
    return c.json({ jobs: page.jobs.map(view), next_cursor: page.nextCursor === null ? null : String(page.nextCursor) }, 200);
  },
);
