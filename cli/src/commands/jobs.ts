/** `edgerunner job list`: workflow jobs the coordinator heard of, the latest to arrive first, a page at a time. */

import type { components, paths } from "../api-types.ts";
import { unwrap } from "../client.ts";
import { bool, type Command, int, str } from "../command.ts";
import { scaleSetId } from "../resolve.ts";
import { renderTable } from "../table.ts";

type Job = components["schemas"]["Job"];
type Query = NonNullable<paths["/api/v1/jobs"]["get"]["parameters"]["query"]>;

const shorten = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The table `job list` prints. Each entity keeps its own row of a job, so the same id may show twice. */
export const jobTable = (rows: Job[]) =>
  renderTable<Job>(
    [
      { header: "ID", value: (j) => j.id },
      { header: "NAME", value: (j) => j.name },
      // `repository` is already `owner/name`.
      { header: "REPOSITORY", value: (j) => j.repository },
      { header: "STATUS", value: (j) => j.status },
      { header: "CONCLUSION", value: (j) => j.conclusion },
      { header: "LABELS", value: (j) => j.labels },
      { header: "MATCHED", value: (j) => (j.matched ? "yes" : "no") },
      { header: "RUNNER", value: (j) => j.runner_name },
      { header: "QUEUED", value: (j) => j.queued_at },
      // The whole reason is in `--json`; a table row keeps it short enough to stay one line.
      { header: "REFUSED", value: (j) => (j.refusal ? shorten(j.refusal, 60) : null) },
    ],
    rows,
  );

export const jobCommands: Command[] = [
  {
    words: ["job", "list"],
    summary: "List workflow jobs, the latest to arrive first",
    options: {
      unmatched: { type: "boolean", description: "only jobs no scale set matches" },
      status: { type: "string", arg: "STATUS", description: "queued, waiting, in_progress or completed" },
      scaleset: { type: "string", arg: "ID|NAME", description: "only this scale set's" },
      limit: { type: "string", arg: "N", description: "jobs per page (1-500)" },
      cursor: { type: "string", arg: "CURSOR", description: "the next page (printed under the table)" },
    },
    run: async (ctx) => {
      const v = ctx.values;
      const api = ctx.api();
      const scaleset = str(v, "scaleset");
      const query: Record<string, unknown> = {
        ...(bool(v, "unmatched") ? { unmatched: "true" } : {}),
        ...(str(v, "status") ? { status: str(v, "status") } : {}),
        ...(scaleset ? { scaleset_id: await scaleSetId(api, scaleset) } : {}),
        ...(int(v, "limit") !== undefined ? { limit: int(v, "limit") } : {}),
        ...(int(v, "cursor") !== undefined ? { cursor: int(v, "cursor") } : {}),
      };
      const data = await unwrap(api.GET("/api/v1/jobs", { params: { query: query as Query } }));
      const more = data.next_cursor ? `\nmore: edgerunner job list --cursor ${data.next_cursor}\n` : "";
      return { data, text: jobTable(data.jobs) + more };
    },
  },
];
