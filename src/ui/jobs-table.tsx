import type { JobRow } from "../db/dashboard/scaleset-page-queries";
import { clip, duration, labelList, when } from "./format";
import { Badge } from "./views";

/**
 * Jobs as the jobs page and a scale set's page show them. A job still waiting for a runner
 * shows how long it has waited so far; a started one, how long it waited.
 */
export function JobsTable({ jobs, now, names }: { jobs: JobRow[]; now: number; names: Map<string, string> }) {
  return (
    <table class="jobs">
      <thead>
        <tr>
          <th>Job</th>
          <th>Name</th>
          <th>Repository</th>
          <th>Labels</th>
          <th>Status</th>
          <th>Scale set</th>
          <th>Queued</th>
          <th class="num">Queued → started</th>
          <th>Runner</th>
        </tr>
      </thead>
      <tbody>
        {jobs.length === 0 && (
          <tr>
            <td colspan={9} class="mut">
              No jobs.
            </td>
          </tr>
        )}
        {jobs.map((j) => {
          const waiting = j.started_at === null && (j.status === "queued" || j.status === "waiting");
          const latency =
            j.queued_at !== null && j.started_at !== null
              ? j.started_at - j.queued_at
              : waiting && j.queued_at !== null
                ? now - j.queued_at
                : null;
          return (
            <tr data-job={String(j.id)}>
              <td>{String(j.id)}</td>
              <td>{clip(j.workflow_name ? `${j.workflow_name} / ${j.name}` : j.name)}</td>
              <td>{j.repository}</td>
              <td class="small">{labelList(j.labels)}</td>
              <td>
                <Badge v={j.status} />
                {j.problem && (
                  <div class="small warn" data-problem>
                    {clip(j.problem, 200)}
                  </div>
                )}
                {j.refusal && (
                  // A refused job waits for nothing: its shaped scale set makes it no machine, so say why where it is looked for.
                  <div class="small bad" data-refusal>
                    <span class="badge bad">refused</span> {clip(j.refusal, 300)}
                  </div>
                )}
              </td>
              <td>
                {j.scale_set_id ? (
                  <a href={`/ui/scalesets/${j.scale_set_id}`}>{names.get(j.scale_set_id) ?? j.scale_set_id}</a>
                ) : (
                  <span class="badge bad">unmatched</span>
                )}
              </td>
              <td class="small">{when(j.queued_at)}</td>
              <td class={waiting ? "num warn" : "num"}>
                {latency === null ? "—" : waiting ? `waiting ${duration(latency)}` : duration(latency)}
              </td>
              <td>{j.runner_name ? clip(j.runner_name, 64) : "—"}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
