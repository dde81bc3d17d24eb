import { describe, expect, it } from "vitest";
import {
  compareCandidates,
  inScope,
  parentKeys,
  type Reporter,
  type RoutableScaleSet,
  rerouteWaitingJobs,
  routeJob,
  type ScopedScaleSet,
  servesLabels,
  type WaitingJob,
} from "../../../src/intake/routing";

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

describe("scope: which entities' scale sets a reported job may use", () => {
  const cand = (id: string, lookupKey: string, labels: string[], over: Partial<ScopedScaleSet> = {}): ScopedScaleSet => ({
    ...set(id, labels),
    entityId: `id-of-${lookupKey}`,
    lookupKey,
    ...over,
  });
  const reporter = (lookupKey: string, over: Partial<Reporter> = {}): Reporter => {
    const [kind, name] = lookupKey.split(":") as [Reporter["kind"], string];
    return { id: `id-of-${lookupKey}`, kind, owner: name.split("/")[0]!, useParentScaleSets: false, enterprise: null, ...over };
  };
  const job = (seq: number, labels: string[], r: Reporter): WaitingJob => ({ seq, labels, reporter: r });

  const repo = cand("repo", "repository:octo/app", ["self-hosted", "linux"]);
  const org = cand("org", "organization:octo", ["self-hosted", "linux"], { priority: 5 });
  const ent = cand("ent", "enterprise:corp", ["self-hosted", "linux"], { priority: 9 });
  const sibling = cand("sibling", "repository:octo/other", ["self-hosted", "linux"], { priority: 9 });
  const all = [repo, org, ent, sibling];

  it("is the reporter's own scale sets only, by default", () => {
    expect(inScope(all, [reporter("repository:octo/app")]).map((s) => s.id)).toEqual(["repo"]);
    expect(inScope(all, [reporter("organization:octo")]).map((s) => s.id)).toEqual(["org"]);
    expect(inScope(all, [reporter("enterprise:corp")]).map((s) => s.id)).toEqual(["ent"]);
    // An enterprise the reporter names in a payload, or was linked to without opting in, adds nothing.
    expect(inScope(all, [reporter("repository:octo/app", { enterprise: "corp" })]).map((s) => s.id)).toEqual(["repo"]);
  });

  it("adds the registered parents when the reporter opted in: its organization and enterprise", () => {
    const optedIn = reporter("repository:octo/app", { useParentScaleSets: true });
    expect(parentKeys(optedIn)).toEqual(["organization:octo"]);
    expect(inScope(all, [optedIn]).map((s) => s.id)).toEqual(["repo", "org"]);
    const withEnterprise = { ...optedIn, enterprise: "Corp" };
    expect(parentKeys(withEnterprise)).toEqual(["organization:octo", "enterprise:corp"]);
    // A repository without its own link uses its organization's.
    expect(parentKeys({ ...optedIn, organizationEnterprise: "corp" })).toEqual(["organization:octo", "enterprise:corp"]);
    expect(parentKeys(reporter("organization:octo", { useParentScaleSets: true, enterprise: "corp" }))).toEqual(["enterprise:corp"]);
    expect(parentKeys(reporter("enterprise:corp", { useParentScaleSets: true }))).toEqual([]);
    // Never a sibling repository, whatever the settings.
    expect(inScope(all, [withEnterprise]).map((s) => s.id)).not.toContain("sibling");
  });

  it("is the union over every entity whose secret signed", () => {
    expect(inScope(all, [reporter("repository:octo/app"), reporter("organization:octo")]).map((s) => s.id)).toEqual(["repo", "org"]);
  });

  it("reroutes a waiting job among its reporter's scope, best first", () => {
    const out = rerouteWaitingJobs(
      [
        job(1, ["self-hosted", "linux"], reporter("repository:octo/app")),
        job(2, ["self-hosted", "linux"], reporter("repository:octo/app", { useParentScaleSets: true, enterprise: "corp" })),
        job(3, ["self-hosted", "linux"], reporter("repository:octo/elsewhere")),
        job(4, ["gpu"], reporter("organization:octo")),
      ],
      all,
    );
    expect(Object.fromEntries([...out].map(([id, s]) => [id, s.id]))).toEqual({ 1: "repo", 2: "ent" });
  });

  it("never routes to a disabled scale set", () => {
    const off = cand("off", "repository:octo/app", ["linux"], { enabled: false });
    expect(rerouteWaitingJobs([job(1, ["linux"], reporter("repository:octo/app"))], [off]).size).toBe(0);
  });
});
