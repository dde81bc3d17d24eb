import { describe, expect, it } from "vitest";
import type { InstanceRecord } from "../../src/db/scaleset/snapshot-store";
import { judgeUnlisted, orphanMachines, strayRunners, UNCONFIRMED_CHECKS_BEFORE_GONE, unlistedInstances } from "../../src/scaleset/drift";

const machine = (name: string) => ({ provider_id: `i-${name}`, name, status: "running" as const });
const row = (name: string, status: InstanceRecord["status"]) => ({ name, status }) as InstanceRecord;

describe("drift", () => {
  it("finds the machines no instance names, leaving alone those with an operation under way", () => {
    const listed = [machine("er-known"), machine("er-orphan"), machine("er-creating")];
    expect(orphanMachines(listed, new Set(["er-known"]), new Set(["er-creating"]))).toEqual([machine("er-orphan")]);
  });

  it("finds the instances that should have a machine the cloud does not list", () => {
    const rows = [
      row("er-listed", "running"),
      row("er-running", "running"),
      row("er-stopped", "stopped"),
      row("er-unknown", "unknown"),
      row("er-busy", "running"),
      row("er-creating", "creating"),
      row("er-deleting", "deleting"),
      row("er-pending", "pending_delete"),
    ];
    expect(unlistedInstances(rows, new Set(["er-listed"]), new Set(["er-busy"])).map((r) => r.name)).toEqual([
      "er-running",
      "er-stopped",
      "er-unknown",
    ]);
  });

  it("takes an unlisted instance for gone when the provider says not found, or fails to confirm it too many checks in a row", () => {
    const [a, b, c] = [row("er-a", "running"), row("er-b", "running"), row("er-c", "running")];
    const notFound = { ok: false as const, error: { kind: "not_found" as const, message: "gone", status: 404 } };
    const broken = { ok: false as const, error: { kind: "retryable" as const, message: "nova is sad", status: 500 } };
    const there = { ok: true as const, value: machine("er-c") };
    const first = judgeUnlisted([a, b, c], [notFound, broken, there], {});
    expect(first.gone).toEqual([{ row: a, reason: "machine is gone from the provider", force: false }]);
    // A confirmed machine is not counted; one failed check is not enough.
    expect(first.unconfirmed).toEqual({ "er-b": 1 });
    const last = judgeUnlisted([b], [broken], { "er-b": UNCONFIRMED_CHECKS_BEFORE_GONE - 1, "er-listed-again": 2 });
    expect(last.gone).toEqual([
      { row: b, reason: expect.stringMatching(/failed to confirm it 3 times: retryable \(500\): nova is sad/), force: true },
    ]);
    // Counts start over for an instance listed again (not in `missing`) or gone.
    expect(last.unconfirmed).toEqual({});
  });

  it("finds GitHub runners named with the scale set's prefix that it does not know", () => {
    const runners = [
      { id: 1, name: "er-known", busy: false },
      { id: 2, name: "er-stray", busy: true },
      { id: 3, name: "other-er-x", busy: false },
      { id: 4, name: "erx-similar", busy: false },
    ];
    expect(strayRunners(runners, "er", new Set(["er-known"]))).toEqual([{ id: 2, name: "er-stray", busy: true }]);
  });
});
