import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { providerSecretByName } from "../../src/db/providers/provider-store";
import { findInstance, findInstanceWithJitConfig, instanceOwner, liveInstanceNames } from "../../src/db/runner/instance-lookups";
import { applyStatusChanges, insertInstancesStatements, statusChangeStatements } from "../../src/db/runner/instance-store";
import { claimRegistrationToken, releaseRegistrationToken, sealRegistrationToken } from "../../src/db/runner/registration-token-store";
import { recordSystemInfo } from "../../src/db/runner/runner-report-store";
import { insertInstance, seed, transitionsOf } from "./helpers";

let scaleSetId: string;
let otherScaleSetId: string;

beforeAll(async () => {
  const repo = await seed.repository();
  scaleSetId = (await seed.scaleSet(`repositories/${repo.id}`)).id;
  otherScaleSetId = (await seed.scaleSet(`repositories/${repo.id}`)).id;
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

const columns = (id: string, cols: string) => env.DB.prepare(`SELECT ${cols} FROM instances WHERE id = ?`).bind(id).first();

describe("instance store: status changes", () => {
  it("inserts a row whose create is sent in the same pass as creating, with both transitions", async () => {
    const [a, b] = newRows(2);
    const results = await env.DB.batch(insertInstancesStatements(env.DB, [{ ...a!, creating: true }, b!], "to meet demand"));
    expect(await columns(a!.id, "status, status_changed_at")).toEqual({ status: "creating", status_changed_at: 1_000 });
    expect(await columns(b!.id, "status")).toEqual({ status: "pending_create" });
    expect(await transitions(a!.id)).toEqual([
      { from_value: null, to_value: "pending_create", reason: "to meet demand", field: "status" },
      { from_value: "pending_create", to_value: "creating", reason: "calling provider", field: "status" },
    ]);
    expect(await transitions(b!.id)).toEqual([{ from_value: null, to_value: "pending_create", reason: "to meet demand", field: "status" }]);
    // Rows written (D1 bills them): each instance row and its three index entries, its history in
    // the row; no UPDATE of the row a moment later.
    expect(results.map((r) => r.meta.rows_written)).toEqual([2 * 4]);
    const moved = await env.DB.batch(
      statusChangeStatements(env.DB, [
        { id: a!.id, from: "creating", to: "running", reason: "up", at: 2_000, set: { runnerStatus: "installing" } },
      ]),
    );
    // The row alone: both transitions go in its history, and no index has the status.
    expect(moved.map((r) => r.meta.rows_written)).toEqual([1]);
    expect((await transitions(a!.id)).slice(2)).toEqual([
      { from_value: "creating", to_value: "running", reason: "up", field: "status" },
      { from_value: "pending", to_value: "installing", reason: "up", field: "runner_status" },
    ]);
  });

  it("applies a change only from the status it expects, and records it", async () => {
    const [a, b] = newRows(2);
    await env.DB.batch(insertInstancesStatements(env.DB, [a!, b!], "t"));
    const applied = await applyStatusChanges(env.DB, [
      {
        id: a!.id,
        from: "pending_create",
        to: "creating",
        reason: "calling provider",
        at: 2_000,
        set: { agentId: 42, jitConfigEnc: "er1.x" },
      },
      { id: b!.id, from: "creating", to: "running", reason: "stale view", at: 2_000 },
    ]);
    expect([...applied]).toEqual([a!.id]);
    const rowA = await env.DB.prepare("SELECT status, agent_id, jit_config_enc, status_changed_at FROM instances WHERE id = ?")
      .bind(a!.id)
      .first();
    expect(rowA).toEqual({ status: "creating", agent_id: 42, jit_config_enc: "er1.x", status_changed_at: 2_000 });
    expect((await transitions(a!.id)).map((t: any) => t.to_value)).toEqual(["pending_create", "creating"]);
    expect((await transitions(b!.id)).map((t: any) => t.to_value)).toEqual(["pending_create"]);
  });

  it("sets machine fields, keeps absent ones, clears explicit nulls, and records runner status changes", async () => {
    const [a] = newRows(1);
    await env.DB.batch(insertInstancesStatements(env.DB, [a!], "t"));
    await applyStatusChanges(env.DB, [
      { id: a!.id, from: "pending_create", to: "creating", reason: "r", at: 2, set: { providerFault: "boom" } },
    ]);
    await applyStatusChanges(env.DB, [
      {
        id: a!.id,
        from: "creating",
        to: "running",
        reason: "provider created the machine",
        at: 3,
        set: {
          providerId: "i-123",
          addresses: [{ address: "10.0.0.1", type: "private" }],
          osName: "ubuntu",
          providerFault: null,
          runnerStatus: "idle",
        },
      },
    ]);
    const row = await env.DB.prepare(
      "SELECT provider_id, addresses, os_name, os_type, provider_fault, runner_status, runner_status_changed_at FROM instances WHERE id = ?",
    )
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
});

describe("instance store: history and deletion", () => {
  it("keeps the last 100 transitions, oldest first", async () => {
    const [a] = newRows(1);
    await env.DB.batch(insertInstancesStatements(env.DB, [{ ...a!, creating: true }], "t"));
    // 60 reports that each record a runner status and a status move back and forth: 122 in all.
    for (let i = 0; i < 60; i++) {
      const [from, to] = i % 2 ? (["running", "creating"] as const) : (["creating", "running"] as const);
      await applyStatusChanges(env.DB, [
        { id: a!.id, from, to, reason: `r${i}`, at: 10 + i, set: { runnerStatus: "installing", recordRunnerReport: true } },
      ]);
    }
    const history = await transitionsOf(a!.id);
    expect(history).toHaveLength(100);
    expect(history.at(-1)).toMatchObject({ field: "runner_status", reason: "r59", at: 69 });
    expect(history[0]).toMatchObject({ field: "status", reason: "r10", at: 20 });
    expect(history.map((t) => t.at)).toEqual([...history.map((t) => t.at)].sort((x, y) => x - y));
  });

  it("sets the deletion time only on the move to deleted, which alone writes the scale set's index", async () => {
    const [a] = newRows(1);
    await env.DB.batch(insertInstancesStatements(env.DB, [{ ...a!, creating: true }], "t"));
    const steps = [
      ["creating", "running"],
      ["running", "pending_delete"],
      ["pending_delete", "deleting"],
    ] as const;
    for (const [i, [from, to]] of steps.entries()) {
      const [moved] = await env.DB.batch(statusChangeStatements(env.DB, [{ id: a!.id, from, to, reason: "r", at: 10 + i }]));
      expect(moved!.meta.rows_written).toBe(1);
      expect(await columns(a!.id, "deleted_at")).toEqual({ deleted_at: null });
    }
    const [gone] = await env.DB.batch(
      statusChangeStatements(env.DB, [{ id: a!.id, from: "deleting", to: "deleted", reason: "r", at: 50 }]),
    );
    expect(gone!.meta.rows_written).toBe(2);
    expect(await columns(a!.id, "status, deleted_at, status_changed_at")).toEqual({
      status: "deleted",
      deleted_at: 50,
      status_changed_at: 50,
    });
  });
});

describe("instance store: one instance", () => {
  it("finds an instance by name, within a scale set only when asked to", async () => {
    const row = await insertInstance(scaleSetId, {
      status: "creating",
      runner_status: "installing",
      create_attempt: 2,
      agent_id: 77,
      os_type: "linux",
      os_arch: "arm64",
    });
    const found = {
      id: row.id,
      name: row.name,
      scaleSetId,
      status: "creating",
      runnerStatus: "installing",
      createAttempt: 2,
      agentId: 77,
      hasJitConfig: false,
      jitOnBoot: false,
      osType: "linux",
      osArch: "arm64",
    };
    expect(await findInstance(env.DB, row.name)).toEqual(found);
    expect(await findInstance(env.DB, row.name, scaleSetId)).toEqual(found);
    expect(await findInstance(env.DB, row.name, otherScaleSetId)).toBeNull();
    expect(await findInstance(env.DB, "no-such-runner")).toBeNull();
    expect(await findInstanceWithJitConfig(env.DB, row.name)).toEqual({ ...found, jitConfigEnc: null });
  });

  it("reads the sealed JIT config only when asked for it", async () => {
    const row = await insertInstance(scaleSetId, { status: "creating", runner_status: "pending", jit_config_enc: "er1.sealed" });
    const found = await findInstance(env.DB, row.name);
    expect(found).toMatchObject({ hasJitConfig: true });
    expect(found).not.toHaveProperty("jitConfigEnc");
    expect(await findInstanceWithJitConfig(env.DB, row.name, scaleSetId)).toMatchObject({ hasJitConfig: true, jitConfigEnc: "er1.sealed" });
    expect(await findInstanceWithJitConfig(env.DB, row.name, otherScaleSetId)).toBeNull();
  });

  it("names an instance's scale set and provider", async () => {
    const row = await insertInstance(scaleSetId);
    const provider = await env.DB.prepare("SELECT provider_id FROM scale_sets WHERE id = ?")
      .bind(scaleSetId)
      .first<{ provider_id: string }>();
    expect(await instanceOwner(createDb(env), row.name)).toEqual({ scaleSetId, providerId: provider!.provider_id });
    expect(await instanceOwner(createDb(env), "no-such-runner")).toBeNull();
  });

  it("tells which names live instances have, across scale sets and past D1's parameter limit", async () => {
    const ours = await Promise.all(Array.from({ length: 95 }, () => insertInstance(scaleSetId)));
    const theirs = await insertInstance(otherScaleSetId);
    const gone = await insertInstance(scaleSetId, { status: "deleted" });
    const live = await liveInstanceNames(env.DB, [...ours.map((r) => r.name), theirs.name, gone.name, "never-existed"]);
    expect([...live].sort()).toEqual([...ours.map((r) => r.name), theirs.name].sort());
    expect(await liveInstanceNames(env.DB, [])).toEqual(new Set());
  });

  it("records system info for the current create attempt only, keeping what a report leaves out", async () => {
    const row = await insertInstance(scaleSetId, { create_attempt: 2, os_name: "ubuntu" });
    await recordSystemInfo(env.DB, { id: row.id, createAttempt: 1 }, { osName: "debian", osVersion: "12", reportedAgentId: 5 }, 10);
    expect(await columns(row.id, "os_name, os_version, reported_agent_id")).toEqual({
      os_name: "ubuntu",
      os_version: null,
      reported_agent_id: null,
    });
    await recordSystemInfo(env.DB, { id: row.id, createAttempt: 2 }, { osName: null, osVersion: "24.04", reportedAgentId: 5 }, 11);
    expect(await columns(row.id, "os_name, os_version, reported_agent_id, updated_at")).toEqual({
      os_name: "ubuntu",
      os_version: "24.04",
      reported_agent_id: 5,
      updated_at: 11,
    });
  });

  it("lets one claim of a registration token win, and gives back only its own claim", async () => {
    const row = await insertInstance(scaleSetId);
    const inst = { id: row.id, createAttempt: 1 };
    expect(await claimRegistrationToken(env.DB, inst, 100, 0)).toEqual({ claimed: true, sealed: null, claimedAt: 100 });
    expect(await claimRegistrationToken(env.DB, inst, 101, 0)).toEqual({ claimed: false, sealed: null, claimedAt: 100 });
    await releaseRegistrationToken(env.DB, row.id, 101);
    expect(await columns(row.id, "registration_token_served_at")).toEqual({ registration_token_served_at: 100 });
    await releaseRegistrationToken(env.DB, row.id, 100);
    expect((await claimRegistrationToken(env.DB, inst, 102, 0)).claimed).toBe(true);
    const jit = await insertInstance(scaleSetId, { jit_config_enc: "er1.sealed" });
    expect(await claimRegistrationToken(env.DB, { id: jit.id, createAttempt: 1 }, 100, 0)).toEqual({
      claimed: false,
      sealed: null,
      claimedAt: null,
    });
  });

  it("keeps the sealed token for later requests, and lets a claim cut off before sealing be taken over", async () => {
    const row = await insertInstance(scaleSetId);
    const inst = { id: row.id, createAttempt: 1 };
    expect((await claimRegistrationToken(env.DB, inst, 100, 0)).claimed).toBe(true);
    // Not stale yet (claimed at 100, stale before 50): the later request waits.
    expect(await claimRegistrationToken(env.DB, inst, 110, 50)).toEqual({ claimed: false, sealed: null, claimedAt: 100 });
    // Stale (stale before 105): taken over; the first claim can no longer seal.
    expect((await claimRegistrationToken(env.DB, inst, 120, 105)).claimed).toBe(true);
    expect(await sealRegistrationToken(env.DB, inst, 100, "er1.first")).toBe(false);
    expect(await sealRegistrationToken(env.DB, inst, 120, "er1.second")).toBe(true);
    // Sealed: never taken over, however old; every later request reads the same token.
    expect(await claimRegistrationToken(env.DB, inst, 500, 400)).toEqual({ claimed: false, sealed: "er1.second", claimedAt: 120 });
    expect(await sealRegistrationToken(env.DB, { id: row.id, createAttempt: 2 }, 120, "er1.other")).toBe(false);
  });
});

describe("provider store", () => {
  it("finds a provider's sealed secret by name", async () => {
    const p = await seed.provider();
    expect(await providerSecretByName(createDb(env), p.name)).toMatchObject({
      id: p.id,
      name: p.name,
      secretEnc: expect.stringMatching(/^er1\./),
    });
    expect(await providerSecretByName(createDb(env), "no-such-provider")).toBeNull();
  });
});
