import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { backstopKey, hookWatchKey } from "../../../src/recovery/watch-list";
import { createEndpoint, createPatCredential, newWorld } from "../github-helpers";
import { api } from "../helpers";
import { callsTo, jobsOf, lostJobs, pass, recoveriesOf, recoveryWorld, SECRET, scaleSetOf, WEBHOOK_URL, watchRow } from "./recovery-world";

/**
 * The backstop: where a hook's deliveries cannot be read (an enterprise's hook, credentials that
 * may not read them), the entity's open jobs are asked of GitHub and compared with ours.
 */

describe("the backstop", () => {
  it("steps in when the hook's deliveries are refused (403): the refusal is said, and the lost jobs are found", async () => {
    const w = await recoveryWorld();
    const ids = await lostJobs(w.github, 2);
    await w.github.fault({ kind: "forbidden", path: "/deliveries", times: -1 });

    await pass();
    expect(await watchRow(hookWatchKey(w.entityId))).toMatchObject({ status: "forbidden", detail: expect.stringContaining("403") });
    expect(await jobsOf(w.entityId)).toEqual({});

    await pass();
    expect(await jobsOf(w.entityId)).toEqual(Object.fromEntries(ids.map((id) => [id, { status: "queued", scale_set_id: w.scaleSetId }])));
    const found = await recoveriesOf(backstopKey(w.entityId));
    expect(found.map((r) => [r.means, r.outcome, r.action, r.job_id]).sort()).toEqual(
      ids.map((id) => ["backstop", "recovered", "queued", id]),
    );
    expect(await watchRow(backstopKey(w.entityId))).toMatchObject({ kind: "backstop", status: "ok" });
    // Each job taken in once: a third pass finds the same runs unchanged and lists no job again.
    await w.github.clearRequests();
    await pass();
    expect(await callsTo(w.github, "list_run_jobs")).toHaveLength(0);
    expect(await recoveriesOf(backstopKey(w.entityId))).toHaveLength(2);

    // Once the hook can be read again, the backstop stands down.
    await w.github.clearFaults();
    await pass({ hookRecheckMs: 0 });
    expect(await watchRow(hookWatchKey(w.entityId))).toMatchObject({ status: "ok" });
    await pass();
    expect(await watchRow(backstopKey(w.entityId))).toBeNull();
  });

  it("an enterprise's jobs whose deliveries all failed: its organizations and their active repositories are looked at, the jobs served, and later moved on", async () => {
    const github = await newWorld();
    await github.seed({ enterprise_orgs: { acme: ["octo"] } });
    // A GitHub Enterprise Server: its GET /organizations lists the instance's organizations.
    const endpoint = await createEndpoint(github, true);
    const creds = (await api.get(`/api/v1/github/credentials/${await createPatCredential(endpoint)}`)).body;
    const ent = await api.post("/api/v1/enterprises", { name: "acme", credentials_name: creds.name, webhook_secret: SECRET });
    expect(ent.status, ent.text).toBe(201);
    const scaleSetId = await scaleSetOf("enterprises", ent.body.id);
    // The enterprise's hook: GitHub keeps no record of it that an API shows; every delivery fails.
    await github.deliverWebhooksTo({ url: WEBHOOK_URL, secret: SECRET, scope: "enterprises/acme", enterprise_host: "github.example.test" });
    const ids = await lostJobs(github, 3);

    await pass();
    expect(await jobsOf(ent.body.id)).toEqual(Object.fromEntries(ids.map((id) => [id, { status: "queued", scale_set_id: scaleSetId }])));
    expect(await callsTo(github, "list_organizations")).toHaveLength(1);
    expect((await callsTo(github, "list_org_repos")).map((r) => r.path)).toEqual(["/orgs/octo/repos"]);
    expect(await watchRow(backstopKey(ent.body.id))).toMatchObject({
      status: "ok",
      detail: "GitHub has no API for an enterprise webhook's deliveries",
    });

    // One job started, one finished (its run is no longer open), one still waits.
    const [started, finished, waiting] = ids as [number, number, number];
    await github.putJobs(
      { id: started, repository: "octo/app", status: "in_progress", runner_name: "er-x", runner_id: 5 },
      { id: finished, repository: "octo/app", status: "completed", conclusion: "success" },
    );
    // A row younger than the listing may simply be missing from it: these are not.
    await env.DB.prepare("UPDATE jobs SET created_at = created_at - 120000 WHERE entity_id = ?").bind(ent.body.id).run();
    await pass();
    expect(await jobsOf(ent.body.id)).toEqual({
      [started]: { status: "in_progress", scale_set_id: scaleSetId },
      [finished]: { status: "completed", scale_set_id: scaleSetId },
      [waiting]: { status: "queued", scale_set_id: scaleSetId },
    });
    // The finished one was asked about by itself; the discovery of repositories was not made again.
    expect((await callsTo(github, "get_job")).map((r) => r.path)).toEqual([`/repos/octo/app/actions/jobs/${finished}`]);
    expect(await callsTo(github, "list_organizations")).toHaveLength(1);
    // Moves of jobs already held are not counted as found.
    expect(await recoveriesOf(backstopKey(ent.body.id))).toHaveLength(3);
  });

  it("a repository the credentials may not read runs of says so, and costs nothing more that pass", async () => {
    const w = await recoveryWorld();
    await w.github.fault({ kind: "forbidden", path: "/deliveries", times: -1 }, { kind: "forbidden", path: "/actions/runs", times: -1 });
    await pass();
    await pass();
    const row = await watchRow(backstopKey(w.entityId));
    expect(row).toMatchObject({ status: "forbidden" });
    expect(row!.detail).toContain("its credentials may not read the hook's deliveries");
  });
});
