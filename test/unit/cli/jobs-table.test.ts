import { describe, expect, it } from "vitest";
import type { components } from "../../../cli/src/api-types.ts";
import { jobTable } from "../../../cli/src/commands/jobs.ts";

const job = (over: Partial<components["schemas"]["Job"]>): components["schemas"]["Job"] => ({
  id: 4242,
  source: "webhook",
  entity_id: null,
  run_id: 1,
  run_attempt: 1,
  name: "build",
  workflow_name: "CI",
  repository: "octo/app",
  owner: "octo",
  labels: ["self-hosted", "linux"],
  status: "queued",
  conclusion: null,
  runner_name: null,
  problem: null,
  refusal: null,
  scale_set_id: null,
  matched: false,
  queued_at: "2026-11-26T00:00:00.000Z",
  started_at: null,
  completed_at: null,
  created_at: "2026-11-26T00:00:00.000Z",
  updated_at: "2026-11-26T00:00:00.000Z",
  ...over,
});

describe("job list's table", () => {
  it("shows the repository as GitHub names it (owner/name, once)", () => {
    const out = jobTable([job({}), job({ repository: "evil/app", owner: "evil", status: "completed" })]);
    expect(out).toContain("  octo/app  ");
    expect(out).toContain("  evil/app  ");
    expect(out).not.toContain("octo/octo");
  });

  it("says why a shaped scale set refused a job, cut to keep the row on one line", () => {
    const why = "cpu=128 is above this scale set's 64; ask for fewer vCPUs or widen the scale set's bounds with an update";
    const out = jobTable([job({ refusal: why }), job({ id: 7 })]);
    expect(out.split("\n")[0]).toMatch(/ {2}REFUSED$/);
    expect(out).toContain("cpu=128 is above this scale set's 64; ask for fewer vCPUs o…");
    expect(out).not.toContain("widen");
    expect(out.split("\n")[2]).toMatch(/ {2}-$/);
  });
});
