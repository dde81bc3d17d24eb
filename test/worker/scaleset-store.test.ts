import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { insertInstancesStatements } from "../../src/db/runner/instance-store";
import { loadRunnerSetup } from "../../src/db/scaleset/runner-setup-store";
import { loadScaleSetSnapshot, scaleSetEntity } from "../../src/db/scaleset/snapshot-store";
import { insertInstance, seed, transitionsOf } from "./helpers";

let scaleSetId: string;

beforeAll(async () => {
  const repo = await seed.repository();
  scaleSetId = (await seed.scaleSet(`repositories/${repo.id}`, { labels: ["GPU", "linux"] })).id;
});

const newRows = (n: number, at = 1_000) =>
  Array.from({ length: n }, (_, i) => ({
    id: crypto.randomUUID(),
    name: `ins-${crypto.randomUUID().slice(0, 8)}-${i}`,
    scaleSetId,
    osType: "linux",
    osArch: "amd64",
    createdAt: at,
  }));

async function transitions(id: string) {
  return (await transitionsOf(id)).map(({ from_value, to_value, reason, field }) => ({ from_value, to_value, reason, field }));
}

describe("scale set store", () => {
  it("inserts many instances in one batch, each with its first transition", async () => {
    const rows = newRows(250);
    await env.DB.batch(insertInstancesStatements(env.DB, rows, "created to meet demand"));
    const snap = await loadScaleSetSnapshot(env.DB, scaleSetId);
    expect(snap.instances.filter((i) => rows.some((r) => r.id === i.id))).toHaveLength(250);
    expect(await transitions(rows[0]!.id)).toEqual([
      { from_value: null, to_value: "pending_create", reason: "created to meet demand", field: "status" },
    ]);
    expect(snap.scaleSet).toMatchObject({ id: scaleSetId, labels: ["gpu", "linux"], endpoint: { baseUrl: "https://github.com" } });
  });

  it("loads the snapshot with each instance's job status and the queued job count in one batch", async () => {
    const [a] = newRows(1);
    await env.DB.batch([
      ...insertInstancesStatements(env.DB, [a!], "t"),
      env.DB.prepare(
        "INSERT INTO jobs (id, run_id, repository, owner, labels, status, scale_set_id, created_at, updated_at) VALUES (9001, 1, 'o/r', 'o', '[]', 'in_progress', ?1, 0, 0), (9002, 1, 'o/r', 'o', '[]', 'queued', ?1, 0, 0), (9003, 1, 'o/r', 'o', '[]', 'waiting', ?1, 0, 0), (9004, 1, 'o/r', 'o', '[]', 'queued', NULL, 0, 0)",
      ).bind(scaleSetId),
      env.DB.prepare("UPDATE instances SET job_id = 9001, job_seq = (SELECT seq FROM jobs WHERE id = 9001) WHERE id = ?").bind(a!.id),
    ]);
    const snap = await loadScaleSetSnapshot(env.DB, scaleSetId);
    expect(snap.queuedJobs).toBe(2);
    expect(snap.instances.find((i) => i.id === a!.id)).toMatchObject({ jobId: 9001, jobStatus: "in_progress" });
    expect((await loadScaleSetSnapshot(env.DB, crypto.randomUUID())).scaleSet).toBeNull();
  });

  it("tells when a scale set's last machine was deleted (null: it never had one), for its idle tick", async () => {
    const repo = await seed.repository();
    const fresh = (await seed.scaleSet(`repositories/${repo.id}`)).id;
    expect((await loadScaleSetSnapshot(env.DB, fresh)).lastDeletedAt).toBeNull();
    await insertInstance(fresh, { status: "deleted", status_changed_at: 5_000 });
    await insertInstance(fresh, { status: "deleted", status_changed_at: 9_000 });
    await insertInstance(fresh, { status: "running" });
    expect((await loadScaleSetSnapshot(env.DB, fresh)).lastDeletedAt).toBe(9_000);
  });

  it("reads the entity a scale set serves, and what its booting machines are told", async () => {
    const snap = await loadScaleSetSnapshot(env.DB, scaleSetId);
    expect(await scaleSetEntity(env.DB, scaleSetId)).toEqual(snap.scaleSet!.entity);
    expect(snap.scaleSet!.entity.forge).toBe("github");
    expect(await loadRunnerSetup(env.DB, scaleSetId, "no-such-instance")).toEqual({
      scaleSetId,
      labels: ["gpu", "linux"],
      runnerGroup: snap.scaleSet!.runnerGroup,
      osType: "linux",
      osArch: "amd64",
      entity: snap.scaleSet!.entity,
      baseUrl: "https://github.com",
      caCertBundle: null,
      forge: "github",
      runnerDownloadUrl: null,
      runnerDownloadSha256: null,
      // No credential pool: the entity's own credentials alone mint its runners.
      pool: [snap.scaleSet!.entity.credentialsId],
    });
    expect(snap.pool.map((c) => c.credentialId)).toEqual([snap.scaleSet!.entity.credentialsId]);
    expect(await scaleSetEntity(env.DB, crypto.randomUUID())).toBeNull();
    expect(await loadRunnerSetup(env.DB, crypto.randomUUID(), "no-such-instance")).toBeNull();
  });
});
