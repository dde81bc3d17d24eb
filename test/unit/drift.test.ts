import { describe, expect, it } from "vitest";
import type { InstanceRecord } from "../../src/db/scaleset-store";
import { orphanMachines, strayRunners, unlistedInstances } from "../../src/scaleset/drift";

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
    expect(unlistedInstances(rows, new Set(["er-listed"]), new Set(["er-busy"])).map((r) => r.name)).toEqual(["er-running", "er-stopped", "er-unknown"]);
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
