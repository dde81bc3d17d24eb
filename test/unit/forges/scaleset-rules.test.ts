import { describe, expect, it } from "vitest";
import { forgeScaleSetIssues } from "../../../src/forges/scaleset-rules";

const facts = { intake: "webhook", jitConfigEnabled: true, jitConfigTimingSent: undefined, minIdleRunners: 0 } as const;

describe("a scale set's forge rules", () => {
  it("applies Gitea's rules on Gitea, Forgejo's on Forgejo, and refuses poll on GitHub", () => {
    expect(forgeScaleSetIssues({ ...facts, forge: "github" })).toEqual([]);
    expect(forgeScaleSetIssues({ ...facts, forge: "gitea" }).map((i) => i.path)).toEqual(["jit_config_enabled"]);
    expect(forgeScaleSetIssues({ ...facts, forge: "forgejo", minIdleRunners: 1 }).map((i) => i.path)).toEqual([
      "intake",
      "min_idle_runners",
    ]);
    expect(forgeScaleSetIssues({ ...facts, forge: "github", intake: "poll" }).map((i) => i.path)).toEqual(["intake"]);
  });
});
