import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { findInstance } from "../../src/db/runner/instance-lookups";
import { applyStatusChanges } from "../../src/db/runner/instance-store";
import { readAndApplyRunnerReport } from "../../src/db/runner/runner-report-store";
import type { RunnerReport } from "../../src/scaleset/rpc";
import { instanceRefusal } from "../../src/scaleset/runner/instance-access";
import { reportChangesInAdvance, runnerReportChange } from "../../src/scaleset/runner/runner-report";
import { scaleSetObject } from "../../src/scaleset/stub";
import { dumpDb, inScaleSetObject, insertInstance, seed, transitionsOf } from "./helpers";

// A runner's status report is read and written in one D1 round trip: the scale set object
// decides the change in advance for every row the instance may be, and the store writes the one
// decided for the row as it is (src/db/runner/runner-report-store.ts). What it writes must be what the
// read-then-write path wrote; a row none of the changes was decided for falls back to that path.

let scaleSetId: string;

beforeAll(async () => {
  const repo = await seed.repository();
  scaleSetId = (await seed.scaleSet(`repositories/${repo.id}`)).id;
});

/** The path every report took before: read the instance, decide, write the change (two round trips). */
async function reportReadThenWritten(name: string, createAttempt: number, report: RunnerReport): Promise<string> {
  const row = await findInstance(env.DB, name);
  if (instanceRefusal(row, { ss: scaleSetId, att: createAttempt }) || !row) return "unauthorized";
  const verdict = runnerReportChange(row, createAttempt, report, Date.now());
  if ("error" in verdict) return verdict.error;
  return (await applyStatusChanges(env.DB, [verdict.change])).size ? "ok" : "gone";
}

/** A report through the scale set object, with the D1 round trips its invocation took. */
async function reportThroughObject(name: string, createAttempt: number, report: RunnerReport) {
  const result = await scaleSetObject(env, scaleSetId).runnerReport(scaleSetId, name, createAttempt, report);
  const last = await inScaleSetObject(scaleSetId, (obj) => obj.invocations.status().last);
  expect(last.method).toBe("runnerReport");
  return { result, trips: last.d1_round_trips as number };
}

const instanceColumns =
  "status, runner_status, status_message, agent_id, reported_agent_id, create_attempt, online_at IS NOT NULL AS online, os_name";

/** What an instance and its transitions say, without what differs between two instances (ids, names, clocks). */
async function outcome(id: string) {
  const row = await env.DB.prepare(`SELECT ${instanceColumns} FROM instances WHERE id = ?`).bind(id).first();
  return {
    row,
    transitions: (await transitionsOf(id)).map(({ field, from_value, to_value, reason }) => ({ field, from_value, to_value, reason })),
  };
}

const startupCount = async () =>
  (await env.DB.prepare(
    "SELECT coalesce(sum(count), 0) AS n FROM metric_histograms WHERE metric = 'edgerunner_runner_startup_duration_seconds' AND scale_set_id = ?",
  )
    .bind(scaleSetId)
    .first<{ n: number }>())!.n;

// Every kind of report a booting machine makes, from the row it finds.
const KINDS: { name: string; row: Record<string, unknown>; report: RunnerReport }[] = [
  {
    name: "first progress, before its JIT config is minted",
    row: {},
    report: { status: "installing", message: "downloading runner", agentId: null },
  },
  {
    name: "progress with the runner id its JIT config gave",
    row: { runner_status: "installing", agent_id: 77 },
    report: { status: "installing", message: "configuring runner", agentId: 77 },
  },
  {
    name: "idle, with its JIT runner id (comes online)",
    row: { runner_status: "installing", agent_id: 78 },
    report: { status: "idle", message: "runner successfully installed", agentId: 78 },
  },
  {
    name: "idle without JIT: the reported id is kept as a claim",
    row: { runner_status: "installing" },
    report: { status: "idle", message: "", agentId: 55 },
  },
  {
    name: "progress while the machine is still creating, with an id minted before the create",
    row: { status: "creating", agent_id: 79 },
    report: { status: "installing", message: "", agentId: null },
  },
  {
    name: "failed: the instance goes to deletion",
    row: { status: "creating", runner_status: "installing" },
    report: { status: "failed", message: "checksum does not match", agentId: null },
  },
];

describe("a runner status report in one D1 round trip", () => {
  for (const kind of KINDS) {
    it(`writes what the read-then-write path wrote: ${kind.name}`, async () => {
      const start = { status: "running", runner_status: "pending", created_at: Date.now() - 60_000, ...kind.row };
      const oneTrip = await insertInstance(scaleSetId, start);
      const twoTrips = await insertInstance(scaleSetId, start);
      const online = await startupCount();

      const { result, trips } = await reportThroughObject(oneTrip.name, 1, kind.report);
      expect(result).toEqual({ ok: true });
      expect(trips).toBe(1);
      expect(await reportReadThenWritten(twoTrips.name, 1, kind.report)).toBe("ok");

      const [got, want] = [await outcome(oneTrip.id), await outcome(twoTrips.id)];
      expect(got).toEqual(want);
      // A report is recorded (with its reason), whatever it changed.
      expect(got.transitions).toContainEqual(expect.objectContaining({ field: "runner_status", to_value: kind.report.status }));
      // Each came online once, and was counted once.
      expect(await startupCount()).toBe(online + (kind.report.status === "idle" ? 2 : 0));
    });
  }

  it("refuses what the read-then-write path refused, writing nothing: forbidden changes and reports of a gone attempt", async () => {
    const inst = await insertInstance(scaleSetId, { runner_status: "installing" });
    const before = await dumpDb();
    for (const status of ["pending", "active", "online"] as const) {
      const { result, trips } = await reportThroughObject(inst.name, 1, { status, message: "", agentId: null });
      expect(result).toEqual({ error: "forbidden", from: "installing", to: status });
      expect(trips).toBe(1);
    }
    expect(await dumpDb()).toEqual(before);
  });

  it("falls back to a read and a write for a row none of the changes was decided for (a runner id GitHub gave otherwise)", async () => {
    const start = { runner_status: "installing", agent_id: 90 };
    const fallback = await insertInstance(scaleSetId, start);
    const twoTrips = await insertInstance(scaleSetId, start);
    const report: RunnerReport = { status: "idle", message: "up", agentId: 91 };
    const logged: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void logged.push(String(line)));
    const { result, trips } = await reportThroughObject(fallback.name, 1, report);
    vi.restoreAllMocks();
    expect(result).toEqual({ ok: true });
    expect(trips).toBe(2);
    expect(await reportReadThenWritten(twoTrips.name, 1, report)).toBe("ok");
    expect(await outcome(fallback.id)).toEqual(await outcome(twoTrips.id));
    // GitHub's id stays; the contradicting claim is logged, not recorded.
    expect((await outcome(fallback.id)).row).toMatchObject({ runner_status: "idle", agent_id: 90, reported_agent_id: null });
    const rejected = logged.map((l) => JSON.parse(l)).find((l) => l.event === "runner_id_claim_rejected");
    expect(rejected).toMatchObject({ instance: fallback.name, runner_id: 91, agent_id: 90 });
  });

  it("writes nothing when the row changed after the changes were decided, and returns the row as it is", async () => {
    const inst = await insertInstance(scaleSetId, { runner_status: "pending" });
    const report: RunnerReport = { status: "installing", message: "downloading", agentId: null };
    const decided = reportChangesInAdvance({ ss: scaleSetId, att: 1 }, report, Date.now());
    // Another writer moves the instance on before the batch: none of the decided changes is for that row.
    await env.DB.prepare("UPDATE instances SET status = 'pending_delete' WHERE id = ?").bind(inst.id).run();
    const before = await dumpDb();
    const got = await readAndApplyRunnerReport(env.DB, inst.name, decided);
    expect(got.applied).toBe(false);
    expect(got.instance).toMatchObject({ name: inst.name, status: "pending_delete", runnerStatus: "pending" });
    expect(await dumpDb()).toEqual(before);
    // The object, deciding from the row it read, refuses the report as the read-then-write path did.
    expect((await reportThroughObject(inst.name, 1, report)).result).toEqual({
      error: "unauthorized",
      reason: "instance is pending_delete",
    });
    expect(await dumpDb()).toEqual(before);
  });

  it("changes nothing for a token its instance may not use: another attempt, scale set or instance, a runner that reported in", async () => {
    const inst = await insertInstance(scaleSetId, { runner_status: "installing", create_attempt: 2 });
    const spent = await insertInstance(scaleSetId, { runner_status: "idle" });
    const idle: RunnerReport = { status: "idle", message: "", agentId: 5 };
    const repo = await seed.repository();
    const other = (await seed.scaleSet(`repositories/${repo.id}`)).id;
    const before = await dumpDb();
    const refused = [
      [inst.name, 1, "token is for another create attempt"],
      [inst.name, 3, "token is for another create attempt"],
      ["runner-nosuch", 1, "no such instance"],
      [spent.name, 1, "runner is idle"],
    ] as const;
    for (const [name, attempt, reason] of refused) {
      const { result, trips } = await reportThroughObject(name, attempt, idle);
      expect(result).toEqual({ error: "unauthorized", reason });
      expect(trips).toBe(1);
    }
    // A token naming another scale set: its object refuses, and the instance is untouched.
    expect(await scaleSetObject(env, other).runnerReport(other, inst.name, 2, idle)).toEqual({
      error: "unauthorized",
      reason: "instance is in another scale set",
    });
    expect(await dumpDb()).toEqual(before);
  });
});
