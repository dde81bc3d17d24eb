import { createRequire } from "node:module";
import { freshJobTimes } from "../../bench/harness.mjs";

const require = createRequire(import.meta.url);

/**
 * A real `queued` workflow_job example (@octokit/webhooks-examples) moved to octo/app, the
 * repository the e2e worlds register, with this job id (also its run id) and fresh times.
 */
export function queuedJobPayload(jobId: number): any {
  const examples = require("@octokit/webhooks-examples/api.github.com/index.json");
  const payload = structuredClone(examples.find((e: any) => e.name === "workflow_job").examples.find((e: any) => e.action === "queued"));
  payload.repository.full_name = "octo/app";
  payload.repository.name = "app";
  payload.repository.owner.login = "octo";
  delete payload.organization;
  delete payload.enterprise;
  payload.workflow_job.id = jobId;
  payload.workflow_job.run_id = jobId;
  freshJobTimes(payload);
  return payload;
}
