import { describe, expect, it } from "vitest";
import type { InstanceRecord, ScaleSetRecord } from "../../src/db/scaleset/snapshot-store";
import { NO_CREATE_BACKOFF } from "../../src/scaleset/backoff";
import { planSnapshot } from "../../src/scaleset/executor/plan-input";
import type { InstanceOps } from "../../src/scaleset/object/object-state";
import { scaleSetSettings } from "../../src/scaleset/settings";

const NOW = 1_000_000_000;
const settings = scaleSetSettings({});

const scaleSet = {
  enabled: true,
  minIdleRunners: 1,
  maxRunners: 4,
  bootstrapTimeout: 20,
  maxRunnerLifetimeSeconds: 86_400,
  runnerLifetimeHardCapSeconds: null,
} as ScaleSetRecord;

const instance = (over: Partial<InstanceRecord>): InstanceRecord => ({
  id: "id",
  name: "er-1",
  providerId: null,
  status: "running",
  runnerStatus: "pending",
  runnerStatusChangedAt: null,
  agentId: null,
  reportedAgentId: null,
  registrationTokenServed: false,
  jitAskedAt: null,
  jitOnBoot: false,
  jitMinted: false,
  bootedAt: null,
  jitCredentialsId: null,
  createAttempt: 1,
  jobId: null,
  jobStatus: null,
  jobSeq: null,
  jobRepository: null,
  jobQueuedAt: null,
  createdAt: NOW - 1_000,
  statusChangedAt: NOW - 500,
  ...over,
});

const ops = (over: Partial<InstanceOps> & { instance: string }): InstanceOps => ({
  deleteAttempts: 0,
  retryAt: null,
  opId: null,
  opKind: null,
  pollAt: null,
  ...over,
});

describe("planSnapshot", () => {
  it("takes the scale set's limits and the settings' timings", () => {
    const snap = planSnapshot({
      scaleSet,
      instances: [],
      queuedJobs: 3,
      ops: new Map(),
      inFlight: new Set(),
      createBackoff: NO_CREATE_BACKOFF,
      settings,
      startedAt: 42,
      now: NOW,
    });
    expect(snap).toEqual({
      config: {
        enabled: true,
        minIdleRunners: 1,
        maxRunners: 4,
        bootstrapTimeoutMs: 20 * 60_000,
        scaleDownIdleMs: settings.scaleDownIdleMs,
        operationPollMs: settings.operationPollMs,
        stuckGraceMs: settings.stuckGraceMs,
        startedAt: 42,
        createBackoff: settings.createBackoff,
        lifetime: { maxLifetimeMs: 86_400_000, hardCapMs: null },
      },
      instances: [],
      queuedJobs: 3,
      createBackoff: NO_CREATE_BACKOFF,
      spendCapReached: false,
      now: NOW,
    });
  });

  it("joins each instance with the object's own state of it", () => {
    const snap = planSnapshot({
      scaleSet,
      instances: [
        instance({ name: "idle", runnerStatus: "idle", runnerStatusChangedAt: NOW - 100 }),
        instance({ name: "idle-unknown-since", runnerStatus: "idle" }),
        instance({ name: "awaited", status: "creating", jobStatus: "queued" }),
        instance({ name: "retrying", status: "pending_delete" }),
        instance({ name: "busy-here" }),
      ],
      queuedJobs: 0,
      ops: new Map([
        ["awaited", ops({ instance: "awaited", opId: "op-1", opKind: "create", pollAt: null })],
        ["retrying", ops({ instance: "retrying", retryAt: NOW + 5_000, deleteAttempts: 2 })],
      ]),
      inFlight: new Set(["busy-here"]),
      createBackoff: NO_CREATE_BACKOFF,
      settings,
      startedAt: 0,
      now: NOW,
    });
    const byName = Object.fromEntries(snap.instances.map((i) => [i.name, i]));
    expect(byName.idle).toMatchObject({ idleSince: NOW - 100, awaiting: null, retryAt: null, inFlight: false });
    // Without its own timestamp, an idle runner has idled since its instance last changed status.
    expect(byName["idle-unknown-since"]!.idleSince).toBe(NOW - 500);
    // An awaited operation without a poll time is due now.
    expect(byName.awaited).toMatchObject({ idleSince: null, jobStatus: "queued", awaiting: { kind: "create", pollAt: NOW } });
    expect(byName.retrying).toMatchObject({ retryAt: NOW + 5_000, awaiting: null });
    expect(byName["busy-here"]!.inFlight).toBe(true);
  });

  it("starts an on-boot machine's bootstrap clock at its last JIT ask or mint, else at its create", () => {
    const snap = planSnapshot({
      scaleSet,
      instances: [instance({ name: "asked", jitAskedAt: NOW - 10 }), instance({ name: "never" })],
      queuedJobs: 0,
      ops: new Map(),
      inFlight: new Set(),
      createBackoff: NO_CREATE_BACKOFF,
      settings,
      startedAt: 0,
      now: NOW,
    });
    expect(snap.instances.map((i) => i.bootstrapSince)).toEqual([NOW - 10, NOW - 1_000]);
  });

  it("gives the planner the lifetime watchdog's policy, whether each instance ever had a job, and the spend guard", () => {
    const snap = planSnapshot({
      scaleSet: { ...scaleSet, maxRunnerLifetimeSeconds: 0, runnerLifetimeHardCapSeconds: 7_200 },
      instances: [instance({ name: "had", jobId: 77 }), instance({ name: "never" })],
      queuedJobs: 0,
      ops: new Map(),
      inFlight: new Set(),
      createBackoff: NO_CREATE_BACKOFF,
      settings,
      startedAt: 0,
      spendCapReached: true,
      now: NOW,
    });
    // A lifetime of 0 is never; the hard cap stands on its own.
    expect(snap.config.lifetime).toEqual({ maxLifetimeMs: null, hardCapMs: 7_200_000 });
    expect(snap.instances.map((i) => i.hadJob)).toEqual([true, false]);
    expect(snap.spendCapReached).toBe(true);
  });
});
