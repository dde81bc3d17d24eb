import { Hono } from "hono";
import { jobsPage } from "../../db/dashboard/scaleset-page-queries";
import { JobsTable } from "../jobs-table";
import type { UiEnv } from "../session-middleware";
import { Page } from "../views";

/** The newest jobs, or only those no scale set took (`?unmatched=true`). */
export const jobsRoutes = new Hono<UiEnv>().get("/jobs", async (c) => {
  const unmatched = c.req.query("unmatched") === "true";
  const { jobs, scaleSetNames } = await jobsPage(c.env.DB, { unmatched });
  return c.html(
    <Page title="Jobs" csrf={c.get("csrf")}>
      <h1>{unmatched ? "Unmatched jobs" : "Jobs"}</h1>
      <p class="mut small">
        {unmatched ? "Jobs whose labels no enabled scale set serves. " : "The 200 newest jobs. "}
        {unmatched ? <a href="/ui/jobs">All jobs</a> : <a href="/ui/jobs?unmatched=true">Only unmatched</a>}
      </p>
      <JobsTable jobs={jobs} now={Date.now()} names={scaleSetNames} />
    </Page>,
  );
});
