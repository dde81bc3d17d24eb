import { describe, expect, it } from "vitest";
import { compareCandidates, rerouteWaitingJobs, routeJob, servesLabels, type CandidateScaleSet, type RoutableScaleSet, type WaitingJob } from "../../src/scaleset/routing";

const set = (id: string, labels: string[], over: Partial<RoutableScaleSet> = {}): RoutableScaleSet => ({
  id,
  labels,
  enabled: true,
  priority: 0,
  createdAt: 1000,
  ...over,
});

describe("servesLabels", () => {
  it("needs every job label among the scale set's", () => {
    expect(servesLabels(["linux", "self-hosted", "x64"], ["self-hosted", "linux"])).toBe(true);
    expect(servesLabels(["linux", "self-hosted"], ["self-hosted", "linux", "gpu"])).toBe(false);
  });
  it("compares case-insensitively and ignores blanks and repeats", () => {
    expect(servesLabels(["linux", "self-hosted"], ["Self-Hosted", " LINUX ", "linux", ""])).toBe(true);
  });
  it("matches nothing for a job without labels", () => {
    expect(servesLabels(["linux"], [])).toBe(false);
    expect(servesLabels(["linux"], ["  "])).toBe(false);
  });
});

describe("routeJob", () => {
  it("returns null when nothing serves the labels", () => {
    expect(routeJob(["ubuntu-latest"], [set("a", ["linux", "self-hosted"])])).toBeNull();
    expect(routeJob(["linux"], [])).toBeNull();
  });
  it("skips disabled scale sets", () => {
    const on = set("on", ["linux", "self-hosted", "x64"]);
    const off = set("off", ["linux", "self-hosted"], { enabled: false, priority: 10 });
    expect(routeJob(["self-hosted", "linux"], [off, on])).toBe(on);
    expect(routeJob(["self-hosted", "linux"], [off])).toBeNull();
  });
  it("prefers the highest priority", () => {
    const low = set("low", ["linux"], { priority: 1 });
    const high = set("high", ["linux", "x64", "big"], { priority: 5, createdAt: 9999 });
    expect(routeJob(["linux"], [low, high])).toBe(high);
    expect(routeJob(["linux"], [high, low])).toBe(high);
  });
  it("breaks priority ties by fewest extra labels, then oldest, then id", () => {
    const specific = set("z", ["linux"], { createdAt: 5000 });
    const broad = set("a", ["linux", "gpu"], { createdAt: 1 });
    expect(routeJob(["linux"], [broad, specific])).toBe(specific);

    const older = set("z", ["linux"], { createdAt: 1 });
    const newer = set("a", ["linux"], { createdAt: 2 });
    expect(routeJob(["linux"], [newer, older])).toBe(older);

    const b = set("b", ["linux"]);
    const a = set("a", ["linux"]);
    expect(routeJob(["linux"], [b, a])).toBe(a);
  });
  it("picks the same scale set whatever order they are listed in", () => {
    const sets = [
      set("d", ["linux", "x64"], { priority: 2, createdAt: 3 }),
      set("c", ["linux"], { priority: 2, createdAt: 4 }),
      set("b", ["linux"], { priority: 2, createdAt: 4 }),
      set("a", ["linux", "gpu", "x64"], { priority: 1 }),
    ];
    const sorted = [...sets].sort(compareCandidates).map((s) => s.id);
    expect(sorted).toEqual(["b", "c", "d", "a"]);
    for (let i = 0; i < sets.length; i++) {
      const rotated = [...sets.slice(i), ...sets.slice(0, i)];
      expect(routeJob(["LINUX"], rotated)?.id).toBe("b");
      expect(routeJob(["LINUX"], rotated.reverse())?.id).toBe("b");
    }
  });
});

describe("rerouteWaitingJobs", () => {
  const cand = (id: string, lookupKey: string, labels: string[], over: Partial<CandidateScaleSet> = {}): CandidateScaleSet => ({
    ...set(id, labels),
    entityId: `entity-of-${lookupKey}`,
    lookupKey,
    ...over,
  });
  const job = (id: number, repository: string, labels: string[], entityId: string | null = null): WaitingJob => ({
    id,
    repository,
    owner: repository.split("/")[0]!,
    labels,
    entityId,
  });

  it("offers a job the scale sets of its repository and its organization, case-insensitively, best first", () => {
    const repo = cand("repo", "repository:octo/app", ["self-hosted", "linux"]);
    const org = cand("org", "organization:octo", ["self-hosted", "linux"], { priority: 5 });
    const other = cand("other", "repository:octo/other", ["self-hosted", "linux"], { priority: 9 });
    const out = rerouteWaitingJobs([job(1, "Octo/App", ["self-hosted", "linux"])], [repo, org, other]);
    expect(out.get(1)?.id).toBe("org");
  });

  it("offers the reporting entity's scale sets (an enterprise), and leaves jobs nothing serves", () => {
    const ent = cand("ent", "enterprise:corp", ["self-hosted", "pool"], { entityId: "ent-id" });
    const jobs = [job(1, "octo/app", ["pool"], "ent-id"), job(2, "octo/app", ["pool"], "repo-id"), job(3, "octo/app", ["gpu"], "ent-id")];
    const out = rerouteWaitingJobs(jobs, [ent]);
    expect([...out.keys()]).toEqual([1]);
  });

  it("never routes to a disabled scale set", () => {
    const off = cand("off", "repository:octo/app", ["linux"], { enabled: false });
    expect(rerouteWaitingJobs([job(1, "octo/app", ["linux"])], [off]).size).toBe(0);
  });
});
