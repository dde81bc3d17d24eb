import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { loadScaleSetSnapshot } from "../../src/db/scaleset/snapshot-store";
import { clone, exampleFor } from "../fixtures/webhook-examples";
import { parsePrometheus, value } from "./prometheus-parse";
import { deliver, jobRow, World } from "./webhook-setup";

// A repository's job that the repository's hook and its organization's hook both deliver: a row
// per signer (the tenant rule), one machine and one count (src/db/jobs/job-twins.ts).

const SECRET = { org: "org-secret-twin-org", repo: "repo-secret-twin-app", other: "repo-secret-twin-other" };
const LABELS = ["self-hosted", "twin"];
const sets: Record<string, string> = {};
const ids: Record<string, string> = {};

function queued(id: number, owner = "twin-org", repo = "app") {
  const p = clone(exampleFor("queued", 289782451).payload);
  p.repository.owner.login = owner;
  p.repository.name = repo;
  p.repository.full_name = `${owner}/${repo}`;
  if (p.organization) p.organization.login = owner;
  p.workflow_job.id = id;
  p.workflow_job.labels = LABELS;
  return p;
}

const demand = async (scaleSetId: string) => (await loadScaleSetSnapshot(env.DB, scaleSetId)).queuedJobs;

beforeAll(async () => {
  const w = new World("twins");
  ids.org = await w.organization("twin-org", SECRET.org);
  ids.repo = await w.repository("twin-org", "app", SECRET.repo);
  ids.other = await w.repository("intruder-org", "app", SECRET.other);
  // What is measured is the demand each scale set plans for (its provider refuses every create).
  sets.org = await w.scaleSet("organizations", ids.org, "org-twin", LABELS);
  sets.repo = await w.scaleSet("repositories", ids.repo, "repo-twin", LABELS);
  sets.other = await w.scaleSet("repositories", ids.other, "other-twin", LABELS);
});

describe("one job reported by a repository's hook and its organization's", () => {
  it("keeps a row per signer but asks for one machine, and is counted once", async () => {
    const before = { org: await demand(sets.org!), repo: await demand(sets.repo!) };
    const jobId = 5_100_001;
    expect((await deliver(queued(jobId), SECRET.repo)).body).toMatchObject({ scale_set_id: sets.repo });
    expect((await deliver(queued(jobId), SECRET.org)).body).toMatchObject({ scale_set_id: sets.org });
    // Each signer has its own row, routed in its own scope…
    expect(await jobRow(jobId, ids.repo)).toMatchObject({ scale_set_id: sets.repo, status: "queued" });
    expect(await jobRow(jobId, ids.org)).toMatchObject({ scale_set_id: sets.org, status: "queued" });
    // …but only the first asks for a runner.
    expect(await demand(sets.repo!)).toBe(before.repo + 1);
    expect(await demand(sets.org!)).toBe(before.org);

    const scraped = await exports.default.fetch(
      new Request("https://edgerunner.test/metrics", { headers: { authorization: "Bearer test-metrics-token" } }),
    );
    const m = parsePrometheus(await scraped.text());
    expect(value(m, "edgerunner_jobs", { scale_set_id: sets.repo!, status: "queued" })).toBe(1);
    expect(value(m, "edgerunner_jobs", { scale_set_id: sets.org!, status: "queued" })).toBeUndefined();
  });

  it("lets the organization's row serve when it came first", async () => {
    const before = { org: await demand(sets.org!), repo: await demand(sets.repo!) };
    const jobId = 5_100_002;
    await deliver(queued(jobId), SECRET.org);
    await deliver(queued(jobId), SECRET.repo);
    expect(await demand(sets.org!)).toBe(before.org + 1);
    expect(await demand(sets.repo!)).toBe(before.repo);
  });

  it("is no twin of another tenant's row: a delivery naming the job from elsewhere takes nothing from it", async () => {
    const before = { repo: await demand(sets.repo!), other: await demand(sets.other!) };
    const jobId = 5_100_003;
    // Another tenant, first, signs a delivery with the same job id (its own repository, as it must to be accepted).
    await deliver(queued(jobId, "intruder-org", "app"), SECRET.other);
    await deliver(queued(jobId), SECRET.repo);
    expect(await demand(sets.repo!)).toBe(before.repo + 1);
    expect(await demand(sets.other!)).toBe(before.other + 1);
  });
});
