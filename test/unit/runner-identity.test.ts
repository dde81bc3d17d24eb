import { describe, expect, it } from "vitest";
import type { GithubRunnerInfo, RunnerRemoval } from "../../src/scaleset/ports";
import {
  claimOnReport,
  judgeClaim,
  type RunnerIdentity,
  removalTarget,
  removeInstanceRunner,
} from "../../src/scaleset/runner/runner-identity";

const identity = (over: Partial<RunnerIdentity> = {}): RunnerIdentity => ({
  name: "er-own",
  agentId: null,
  reportedAgentId: null,
  registrationTokenServed: false,
  jobStatus: null,
  ...over,
});

/** GitHub's runners as plain data, recording every call the removal makes. */
function github(runners: GithubRunnerInfo[]) {
  const calls: string[] = [];
  return {
    calls,
    async getRunner(id: number) {
      calls.push(`get ${id}`);
      return runners.find((r) => r.id === id) ?? null;
    },
    async findRunnerByName(name: string) {
      calls.push(`find ${name}`);
      return runners.find((r) => r.name.toLowerCase() === name.toLowerCase()) ?? null;
    },
    async removeRunner(id: number): Promise<RunnerRemoval> {
      calls.push(`delete ${id}`);
      const r = runners.find((x) => x.id === id);
      return !r ? "gone" : r.busy ? "busy" : "removed";
    },
  };
}

const OWN = { id: 11, name: "er-own", busy: false };
const OTHER = { id: 22, name: "er-other", busy: false };

describe("runner identity: which id may be acted on", () => {
  it("removalTarget trusts GitHub's id, checks a claim, and looks up by name only when the machine could register", () => {
    expect(removalTarget(identity({ agentId: 11, reportedAgentId: 22 }))).toEqual({ kind: "known", runnerId: 11 });
    expect(removalTarget(identity({ reportedAgentId: 22 }))).toEqual({ kind: "claimed", runnerId: 22 });
    expect(removalTarget(identity({ registrationTokenServed: true }))).toEqual({ kind: "by_name" });
    expect(removalTarget(identity())).toEqual({ kind: "none" });
  });

  it("removalTarget leaves a runner whose job completed to GitHub, which unregisters an ephemeral runner after its job", () => {
    expect(removalTarget(identity({ agentId: 11, jobStatus: "completed" }))).toEqual({ kind: "none" });
    expect(removalTarget(identity({ reportedAgentId: 22, registrationTokenServed: true, jobStatus: "completed" }))).toEqual({
      kind: "none",
    });
    // Still running its job, or never got one: only we can remove it (a busy one answers 422 and is kept).
    expect(removalTarget(identity({ agentId: 11, jobStatus: "in_progress" }))).toEqual({ kind: "known", runnerId: 11 });
    expect(removalTarget(identity({ agentId: 11, jobStatus: "queued" }))).toEqual({ kind: "known", runnerId: 11 });
  });

  it("judgeClaim: the runner under the claimed id must carry the instance's name (case-insensitive)", () => {
    expect(judgeClaim("er-own", { name: "ER-Own" })).toBe("confirmed");
    expect(judgeClaim("er-own", { name: "er-other" })).toBe("rejected");
    expect(judgeClaim("er-own", null)).toBe("unknown");
  });

  it("claimOnReport records a claim only when GitHub gave no id, and rejects a differing one", () => {
    expect(claimOnReport(null, 22)).toEqual({ record: 22, rejected: false });
    expect(claimOnReport(11, 22)).toEqual({ record: null, rejected: true });
    expect(claimOnReport(11, 11)).toEqual({ record: null, rejected: false });
    expect(claimOnReport(null, null)).toEqual({ record: null, rejected: false });
    expect(claimOnReport(11, null)).toEqual({ record: null, rejected: false });
  });
});

describe("runner identity: removing an instance's runner", () => {
  it("deletes GitHub's own id without asking", async () => {
    const gh = github([OWN, OTHER]);
    expect(await removeInstanceRunner(gh, identity({ agentId: 11, reportedAgentId: 22 }))).toEqual({
      removal: "removed",
      confirmedId: null,
      rejectedClaim: null,
    });
    expect(gh.calls).toEqual(["delete 11"]);
  });

  it("deletes a claimed id once GitHub shows it under the instance's name, and reports it confirmed", async () => {
    const gh = github([OWN, OTHER]);
    expect(await removeInstanceRunner(gh, identity({ reportedAgentId: 11 }))).toEqual({
      removal: "removed",
      confirmedId: 11,
      rejectedClaim: null,
    });
    expect(gh.calls).toEqual(["get 11", "delete 11"]);
  });

  it("never deletes another instance's runner: a claim of it is rejected and the own runner is found by name", async () => {
    const gh = github([OWN, OTHER]);
    expect(await removeInstanceRunner(gh, identity({ reportedAgentId: 22 }))).toEqual({
      removal: "removed",
      confirmedId: 11,
      rejectedClaim: { runnerId: 22, runnerName: "er-other" },
    });
    expect(gh.calls).toEqual(["get 22", "find er-own", "delete 11"]);

    const alone = github([OTHER]);
    expect(await removeInstanceRunner(alone, identity({ reportedAgentId: 22 }))).toEqual({
      removal: "gone",
      confirmedId: null,
      rejectedClaim: { runnerId: 22, runnerName: "er-other" },
    });
    expect(alone.calls).not.toContain("delete 22");
  });

  it("a claimed id GitHub does not know falls back to the name, quietly (ephemeral runners go by themselves)", async () => {
    const gh = github([]);
    expect(await removeInstanceRunner(gh, identity({ reportedAgentId: 99 }))).toEqual({
      removal: "gone",
      confirmedId: null,
      rejectedClaim: null,
    });
    expect(gh.calls).toEqual(["get 99", "find er-own"]);
  });

  it("a machine that fetched a registration token but reported nothing: its runner is found by name; busy stays busy", async () => {
    const gh = github([{ ...OWN, busy: true }]);
    expect(await removeInstanceRunner(gh, identity({ registrationTokenServed: true }))).toEqual({
      removal: "busy",
      confirmedId: 11,
      rejectedClaim: null,
    });
    expect(gh.calls).toEqual(["find er-own", "delete 11"]);
  });

  it("asks GitHub nothing for a runner whose job completed: GitHub removed it", async () => {
    const gh = github([OWN]);
    expect(await removeInstanceRunner(gh, identity({ agentId: 11, jobStatus: "completed" }))).toEqual({
      removal: "gone",
      confirmedId: null,
      rejectedClaim: null,
    });
    expect(gh.calls).toEqual([]);
  });

  it("asks GitHub nothing when the machine could not have registered a runner", async () => {
    const gh = github([OWN]);
    expect(await removeInstanceRunner(gh, identity())).toEqual({ removal: "gone", confirmedId: null, rejectedClaim: null });
    expect(gh.calls).toEqual([]);
  });

  it("lets GitHub errors through, so the caller can wait or force", async () => {
    const gh = { ...github([]), getRunner: async () => Promise.reject(new Error("github down")) };
    await expect(removeInstanceRunner(gh, identity({ reportedAgentId: 5 }))).rejects.toThrow("github down");
  });
});
