import { describe, expect, it } from "vitest";
import { canRunnerTransition } from "../../src/scaleset/instance-states";
import type { RunnerReport } from "../../src/scaleset/rpc";
import { instanceRefusal, usableTokenStates } from "../../src/scaleset/runner/instance-access";
import { claimOnReport, claimsInAdvance } from "../../src/scaleset/runner/runner-identity";
import { reportChangesInAdvance, runnerReportChange, runnerReportEvents } from "../../src/scaleset/runner/runner-report";

const NOW = 1_000_000;
const row = (over: Partial<Parameters<typeof runnerReportChange>[0]> = {}) => ({
  id: "id",
  status: "running" as const,
  runnerStatus: "pending" as const,
  createAttempt: 2,
  agentId: null,
  ...over,
});

describe("runnerReportChange", () => {
  it("records the runner's progress on its instance, keeping the instance status", () => {
    expect(runnerReportChange(row(), 2, { status: "installing", message: "downloading", agentId: null }, NOW)).toEqual({
      change: {
        id: "id",
        from: "running",
        to: "running",
        reason: "downloading",
        at: NOW,
        set: { runnerStatus: "installing", statusMessage: "downloading", recordRunnerReport: true },
      },
      message: "downloading",
      claimRejected: false,
    });
    expect(runnerReportChange(row(), 2, { status: "idle", message: "", agentId: null }, NOW)).toMatchObject({
      change: { reason: "runner idle" },
    });
  });

  it("says when the runner came online: its idle report's time (the store keeps the first)", () => {
    expect(runnerReportChange(row(), 2, { status: "idle", message: "", agentId: null }, NOW)).toMatchObject({
      change: { set: { runnerStatus: "idle", onlineAt: NOW } },
    });
    for (const status of ["installing", "active", "failed"] as const) {
      const out = runnerReportChange(
        row({ runnerStatus: status === "active" ? "idle" : "pending" }),
        2,
        { status, message: "", agentId: null },
        NOW,
      );
      expect("change" in out && out.change.set).not.toHaveProperty("onlineAt");
    }
  });

  it("sends a failed runner's instance to deletion, with a bounded message", () => {
    const out = runnerReportChange(row({ status: "creating" }), 2, { status: "failed", message: "x".repeat(3000), agentId: null }, NOW);
    expect(out).toMatchObject({ change: { from: "creating", to: "pending_delete", reason: `runner failed: ${"x".repeat(2000)}` } });
    expect("message" in out && out.message).toHaveLength(2000);
  });

  it("refuses reports for another create attempt or an instance no longer live", () => {
    const report = { status: "idle" as const, message: "", agentId: null };
    expect(runnerReportChange(row(), 1, report, NOW)).toEqual({ error: "gone" });
    expect(runnerReportChange(row({ status: "pending_delete" }), 2, report, NOW)).toEqual({ error: "gone" });
  });

  it("refuses a runner status change the bootstrap does not allow", () => {
    expect(runnerReportChange(row({ runnerStatus: "failed" }), 2, { status: "idle", message: "", agentId: null }, NOW)).toEqual({
      error: "forbidden",
      from: "failed",
      to: "idle",
    });
  });

  it("keeps a reported runner id as a claim, and rejects one that contradicts GitHub's", () => {
    expect(runnerReportChange(row(), 2, { status: "idle", message: "", agentId: 7 }, NOW)).toMatchObject({
      change: { set: { reportedAgentId: 7 } },
      claimRejected: false,
    });
    const contradicted = runnerReportChange(row({ agentId: 5 }), 2, { status: "idle", message: "", agentId: 7 }, NOW);
    expect(contradicted).toMatchObject({ claimRejected: true });
    expect("change" in contradicted && contradicted.change.set).not.toHaveProperty("reportedAgentId");
  });

  it("logs the report, and a rejected runner id claim as an event of its own", () => {
    const at = { scaleSetId: "ss-1", instance: "r-1" };
    const report = { status: "idle" as const, message: "up", agentId: 7 };
    const plain = runnerReportEvents(at, { runnerStatus: "installing", agentId: null }, report, { message: "up", claimRejected: false });
    expect(plain).toEqual([
      {
        level: "info",
        fields: {
          event: "runner_status",
          scale_set: "ss-1",
          instance: "r-1",
          from: "installing",
          to: "idle",
          message: "up",
          reported_agent_id: 7,
        },
      },
    ]);
    const rejected = runnerReportEvents(at, { runnerStatus: "installing", agentId: 5 }, report, { message: "up", claimRejected: true });
    expect(rejected.map((e) => [e.fields.event, e.level])).toEqual([
      ["runner_status", "info"],
      ["runner_id_claim_rejected", "info"],
    ]);
    expect(rejected[1]!.fields).toMatchObject({ runner_id: 7, agent_id: 5 });
  });

  it("logs bootstrap progress at debug, the runner coming up or failing at info", () => {
    const at = { scaleSetId: "ss-1", instance: "r-1" };
    const level = (status: "installing" | "idle" | "failed") =>
      runnerReportEvents(
        at,
        { runnerStatus: "installing", agentId: null },
        { status, message: "", agentId: null },
        {
          message: "",
          claimRejected: false,
        },
      )[0]!.level;
    expect([level("installing"), level("idle"), level("failed")]).toEqual(["debug", "info", "info"]);
  });
});

describe("reportChangesInAdvance", () => {
  const claims = { ss: "ss-1", att: 2 };
  const reports: RunnerReport[] = [
    { status: "installing", message: "downloading", agentId: null },
    { status: "installing", message: "configuring", agentId: 7 },
    { status: "idle", message: "", agentId: 7 },
    { status: "idle", message: "", agentId: null },
    { status: "failed", message: "checksum", agentId: null },
    { status: "pending", message: "", agentId: null },
    { status: "active", message: "", agentId: 7 },
  ];

  it("the token rule's states: a live instance whose runner still bootstraps, as instanceRefusal says", () => {
    const states = usableTokenStates(claims).map((s) => `${s.status}/${s.runnerStatus}`);
    expect(states.sort()).toEqual(["creating/installing", "creating/pending", "running/installing", "running/pending"]);
  });

  it("claimsInAdvance: one answer when no id is reported (claimOnReport reads none), else one per id it tells apart", () => {
    const none = claimsInAdvance(null);
    expect(none).toEqual([{ claim: { record: null, rejected: false } }]);
    for (const agentId of [null, 1, 7]) expect(claimOnReport(agentId, null)).toEqual(none[0]!.claim);
    expect(claimsInAdvance(7)).toEqual([
      { agentId: null, claim: { record: 7, rejected: false } },
      { agentId: 7, claim: { record: null, rejected: false } },
    ]);
  });

  it("decides each change with runnerReportChange, for a row its guard and `from` describe, one change per row at most", () => {
    for (const report of reports) {
      const changes = reportChangesInAdvance(claims, report, NOW);
      const rows = new Set<string>();
      for (const { guard, ...change } of changes) {
        expect(guard).toMatchObject({ scaleSetId: "ss-1", createAttempt: 2 });
        const row = { id: "id", status: change.from, runnerStatus: guard.runnerStatus, createAttempt: 2, agentId: guard.agentId ?? null };
        expect(instanceRefusal({ ...row, scaleSetId: "ss-1" }, claims)).toBeNull();
        const verdict = runnerReportChange(row, 2, report, NOW);
        expect("change" in verdict && verdict.change).toEqual({ ...change, id: "id" });
        // Only a reported id makes the decision read the instance's.
        expect("agentId" in guard).toBe(report.agentId !== null);
        const key = `${change.from}/${guard.runnerStatus}/${guard.agentId}`;
        expect(rows.has(key), key).toBe(false);
        rows.add(key);
      }
      // Every usable row the rule accepts the report from has its change (none for a forbidden report).
      const accepted = usableTokenStates(claims).filter((s) => canRunnerTransition(s.runnerStatus, report.status));
      expect(changes).toHaveLength(accepted.length * (report.agentId === null ? 1 : 2));
    }
  });
});
