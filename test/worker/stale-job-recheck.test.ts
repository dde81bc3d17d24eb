import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { loadScaleSetSnapshot } from "../../src/db/scaleset-store";
import { githubRunnerPort } from "../../src/scaleset/ports-factory";
import { recheckStaleJobs } from "../../src/scaleset/stale-jobs/stale-job-recheck";
import { queueJobs, scaleSetWorld } from "./scaleset-world";

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
