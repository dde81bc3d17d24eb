import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { loadScaleSetSnapshot } from "../../src/db/scaleset/snapshot-store";
import { githubRunnerPort } from "../../src/scaleset/ports-factory";
import { recheckStaleJobs } from "../../src/scaleset/stale-jobs/stale-job-recheck";
import { inScaleSetObject, transitionsOf } from "./helpers";
import { createRunners, queueJobs, reconcile, scaleSetWorld } from "./scaleset-world";

/** The object's record of when each job was last asked about, kept in memory here. */
function memoryChecks() {
  const checked = new Map<number, number>();
  return {
    checked,
    jobChecks: () => new Map(checked),
    recordJobChecks(jobIds: number[], at: number, keep: Set<number>) {
      for (const id of jobIds) checked.set(id, at);
      for (const id of [...checked.keys()]) if (!keep.has(id) && !jobIds.includes(id)) checked.delete(id);
    },
  };
}

const policy = { staleAfterMs: 60_000, recheckMs: 5 * 60_000, perPass: 3 };

describe("stale-job re-check", () => {
  it("asks GitHub about the oldest stale jobs, a few per pass, and moves forward the ones it started or finished", async () => {
    const w = await scaleSetWorld("stale-recheck-shim-secret", { enabled: false });
    const ids = await queueJobs(w.scaleSetId, 5);
    const [finished, running, queued, unknown, fresh] = ids as [number, number, number, number, number];
    // Oldest first; the last one is too young to be stale.
    for (const [age, id] of [finished, running, queued, unknown].entries()) {
      await env.DB.prepare("UPDATE jobs SET queued_at = ? WHERE id = ?")
        .bind(Date.now() - (60 - age) * 60_000, id)
        .run();
    }
    await w.github.putJobs(
      { id: finished, repository: "octo/app", status: "completed", conclusion: "failure" },
      { id: running, repository: "octo/app", status: "in_progress" },
      { id: queued, repository: "octo/app", status: "queued" },
    );
    const snap = await loadScaleSetSnapshot(env.DB, w.scaleSetId);
    const checks = memoryChecks();
    const input = {
      db: env.DB,
      scaleSetId: w.scaleSetId,
      github: githubRunnerPort(env, snap.scaleSet!.entity),
      checks,
      policy,
      concurrency: 4,
    };

    expect(await recheckStaleJobs({ ...input, oldest: snap.oldestQueued })).toBe(2);
    const jobs = (await env.DB.prepare(`SELECT id, status, conclusion FROM jobs WHERE id IN (${ids.join(",")})`).all<Record<string, any>>())
      .results;
    expect(Object.fromEntries(jobs.map((j) => [j.id, [j.status, j.conclusion]]))).toEqual({
      [finished]: ["completed", "failure"],
      [running]: ["in_progress", null],
      [queued]: ["queued", null],
      [unknown]: ["queued", null],
      [fresh]: ["queued", null],
    });
    expect([...checks.checked.keys()]).toEqual([finished, running, queued]);
    const asked = async () => (await w.github.requests()).filter((r) => r.path.includes("/actions/jobs/")).length;
    expect(await asked()).toBe(3);

    // The next pass asks about the one left over, not again about those just asked.
    const next = await loadScaleSetSnapshot(env.DB, w.scaleSetId);
    expect(await recheckStaleJobs({ ...input, oldest: next.oldestQueued })).toBe(0);
    expect(await asked()).toBe(4);
    expect(checks.checked.has(unknown)).toBe(true);
  });
});

describe("a running job whose completed was lost", () => {
  it("is asked about once its runner is idle at GitHub, and its machine goes when GitHub says it ended", async () => {
    const w = await scaleSetWorld("lost-completed-shim-secret");
    const [machine] = await createRunners(w, 1);
    const jobId = (await env.DB.prepare("SELECT id FROM jobs WHERE scale_set_id = ?").bind(w.scaleSetId).first<{ id: number }>())!.id;
    const instance = await env.DB.prepare("SELECT * FROM instances WHERE name = ?").bind(machine!.name).first<Record<string, any>>();
    // The machine boots and asks for its runner: GitHub now has a runner by its name.
    const boot = await exports.default.fetch(
      new Request("https://edgerunner.test/api/v1/metadata/credentials/runner", { headers: { authorization: `Bearer ${machine!.token}` } }),
    );
    expect(boot.status).toBe(200);
    // The runner took the job (its `in_progress` came); GitHub then finished it, and its `completed` was lost.
    await env.DB.batch([
      env.DB.prepare("UPDATE jobs SET status = 'in_progress', runner_name = ?, started_at = ? WHERE id = ?").bind(
        instance!.name,
        Date.now(),
        jobId,
      ),
      env.DB.prepare("UPDATE instances SET job_id = ?, job_seq = (SELECT seq FROM jobs WHERE id = ?) WHERE id = ?").bind(
        jobId,
        jobId,
        instance!.id,
      ),
    ]);
    await w.github.putJobs({ id: jobId!, repository: "octo/app", status: "completed", conclusion: "success" });
    const runner = (await w.github.state()).runners.find((r) => r.name === instance!.name);
    expect(runner).toBeDefined();
    const asked = async () => (await w.github.requests()).filter((r) => r.path.includes(`/actions/jobs/${jobId}`)).length;
    const driftCheck = async () => {
      await inScaleSetObject(w.scaleSetId, (obj) => (obj.state.lastOrphanCheck = 0));
      await reconcile(w.scaleSetId);
    };
    const status = async () =>
      (await env.DB.prepare("SELECT status FROM instances WHERE id = ?").bind(instance!.id).first<{ status: string }>())!.status;

    // While GitHub shows the runner busy, nobody asks.
    await w.github.updateRunner(runner!.id, { busy: true });
    await driftCheck();
    expect(await asked()).toBe(0);
    expect(await status()).toBe("running");

    // Idle (or gone): asked once; GitHub says the job ended, so the machine goes.
    await w.github.updateRunner(runner!.id, { busy: false });
    await driftCheck();
    expect(await asked()).toBe(1);
    const job = await env.DB.prepare("SELECT status, conclusion FROM jobs WHERE id = ?").bind(jobId).first();
    expect(job).toEqual({ status: "completed", conclusion: "success" });
    await reconcile(w.scaleSetId);
    expect(["pending_delete", "deleting", "deleted"]).toContain(await status());
    const reasons = (await transitionsOf(instance!.id)).map((r) => r.reason);
    expect(reasons).toContain("job_completed");
  });
});
