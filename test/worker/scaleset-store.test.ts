import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { applyStatusChanges, insertInstancesStatements, loadScaleSetSnapshot } from "../../src/db/scaleset-store";
import { seed } from "./helpers";

let scaleSetId: string;

beforeAll(async () => {
  const repo = await seed.repository();
  scaleSetId = (await seed.scaleSet(`repositories/${repo.id}`, { labels: ["GPU", "linux"] })).id;
});

const newRows = (n: number, at = 1_000) =>
  Array.from({ length: n }, (_, i) => ({ id: crypto.randomUUID(), name: `ins-${crypto.randomUUID().slice(0, 8)}-${i}`, scaleSetId, osType: "linux", osArch: "amd64", createdAt: at }));

async function transitions(id: string) {
  return (await env.DB.prepare("SELECT from_value, to_value, reason, field FROM instance_transitions WHERE instance_id = ? ORDER BY id").bind(id).all()).results;
}

describe("scale set store", () => {
  it("inserts many instances in one batch, each with its first transition", async () => {
    const rows = newRows(250);
    await env.DB.batch(insertInstancesStatements(env.DB, rows, "created to meet demand"));
    const snap = await loadScaleSetSnapshot(env.DB, scaleSetId);
    expect(snap.instances.filter((i) => rows.some((r) => r.id === i.id))).toHaveLength(250);
    expect(await transitions(rows[0]!.id)).toEqual([{ from_value: null, to_value: "pending_create", reason: "created to meet demand", field: "status" }]);
    expect(snap.scaleSet).toMatchObject({ id: scaleSetId, labels: ["gpu", "linux"], endpoint: { baseUrl: "https://github.com" } });
  });

  it("applies a change only from the status it expects, and records it", async () => {
    const [a, b] = newRows(2);
    await env.DB.batch(insertInstancesStatements(env.DB, [a!, b!], "t"));
    const applied = await applyStatusChanges(env.DB, [
      { id: a!.id, from: "pending_create", to: "creating", reason: "calling provider", at: 2_000, set: { agentId: 42, jitConfigEnc: "er1.x" } },
      { id: b!.id, from: "creating", to: "running", reason: "stale view", at: 2_000 },
    ]);
    expect([...applied]).toEqual([a!.id]);
    const rowA = await env.DB.prepare("SELECT status, agent_id, jit_config_enc, status_changed_at FROM instances WHERE id = ?").bind(a!.id).first();
    expect(rowA).toEqual({ status: "creating", agent_id: 42, jit_config_enc: "er1.x", status_changed_at: 2_000 });
    expect((await transitions(a!.id)).map((t: any) => t.to_value)).toEqual(["pending_create", "creating"]);
    expect((await transitions(b!.id)).map((t: any) => t.to_value)).toEqual(["pending_create"]);
  });

  it("sets machine fields, keeps absent ones, clears explicit nulls, and records runner status changes", async () => {
    const [a] = newRows(1);
    await env.DB.batch(insertInstancesStatements(env.DB, [a!], "t"));
    await applyStatusChanges(env.DB, [{ id: a!.id, from: "pending_create", to: "creating", reason: "r", at: 2, set: { providerFault: "boom" } }]);
    await applyStatusChanges(env.DB, [
      {
        id: a!.id,
        from: "creating",
        to: "running",
        reason: "provider created the machine",
        at: 3,
        set: { providerId: "i-123", addresses: [{ address: "10.0.0.1", type: "private" }], osName: "ubuntu", providerFault: null, runnerStatus: "idle" },
      },
    ]);
    const row = await env.DB.prepare("SELECT provider_id, addresses, os_name, os_type, provider_fault, runner_status, runner_status_changed_at FROM instances WHERE id = ?")
      .bind(a!.id)
      .first();
    expect(row).toEqual({
      provider_id: "i-123",
      addresses: '[{"address":"10.0.0.1","type":"private"}]',
      os_name: "ubuntu",
      os_type: "linux",
      provider_fault: null,
      runner_status: "idle",
      runner_status_changed_at: 3,
    });
    expect((await transitions(a!.id)).map((t: any) => `${t.field}:${t.to_value}`)).toEqual([
      "status:pending_create",
      "status:creating",
      "status:running",
      "runner_status:idle",
    ]);
  });

  it("loads the snapshot with each instance's job status and the queued job count in one batch", async () => {
    const [a] = newRows(1);
    await env.DB.batch([
      ...insertInstancesStatements(env.DB, [a!], "t"),
      env.DB.prepare(
        "INSERT INTO jobs (id, run_id, repository, owner, labels, status, scale_set_id, created_at, updated_at) VALUES (9001, 1, 'o/r', 'o', '[]', 'in_progress', ?1, 0, 0), (9002, 1, 'o/r', 'o', '[]', 'queued', ?1, 0, 0), (9003, 1, 'o/r', 'o', '[]', 'waiting', ?1, 0, 0), (9004, 1, 'o/r', 'o', '[]', 'queued', NULL, 0, 0)",
      ).bind(scaleSetId),
      env.DB.prepare("UPDATE instances SET job_id = 9001 WHERE id = ?").bind(a!.id),
    ]);
    const snap = await loadScaleSetSnapshot(env.DB, scaleSetId);
    expect(snap.queuedJobs).toBe(2);
    expect(snap.instances.find((i) => i.id === a!.id)).toMatchObject({ jobId: 9001, jobStatus: "in_progress" });
    expect((await loadScaleSetSnapshot(env.DB, crypto.randomUUID())).scaleSet).toBeNull();
  });
});
