import { describe, expect, it } from "vitest";
import { giteaDeliveryHost, giteaSignature, withoutZeroTimes } from "../../../src/forges/gitea/delivery";
import { giteaScopeOf, giteaScopePath } from "../../../src/forges/gitea/gitea-scope";
import { defaultJitConfigEnabled, giteaScaleSetProblems } from "../../../src/forges/gitea/scaleset-rules";
import { jobEventFrom } from "../../../src/intake/job-event";
import { WorkflowJobPayload } from "../../../src/intake/payload";
import { originMatches } from "../../../src/intake/senders";
import { giteaWorkflowJobPayload } from "../../fixtures/gitea/workflow-job-payload";

describe("a Gitea delivery", () => {
  it("turns X-Gitea-Signature's bare hex into the sha256= form, and refuses anything else", () => {
    const hex = "AB".repeat(32);
    expect(giteaSignature(` ${hex} `)).toBe(`sha256=${"ab".repeat(32)}`);
    expect(giteaSignature(`sha256=${hex}`)).toBeNull();
    expect(giteaSignature("ab".repeat(31))).toBeNull();
    expect(giteaSignature("")).toBeNull();
  });

  it("names the host of its repository's web URL", () => {
    expect(giteaDeliveryHost({ repository: { html_url: "https://gitea.example.com:3000/o/r" } })).toBe("gitea.example.com:3000");
    expect(giteaDeliveryHost({ repository: { html_url: "not a url" } })).toBeNull();
    expect(giteaDeliveryHost({ repository: {} })).toBeNull();
    expect(giteaDeliveryHost(null)).toBeNull();
  });

  it("reads Go's zero times as not reached, so a queued job has no start and a started one keeps its times", () => {
    const queued = giteaWorkflowJobPayload({ action: "queued", host: "h", owner: "o", repo: "r", jobId: 5, labels: ["x"] });
    expect(queued.workflow_job.started_at).toBe("0001-01-01T00:00:00Z");
    const parsed = WorkflowJobPayload.parse(withoutZeroTimes(queued));
    expect(parsed.workflow_job).toMatchObject({ started_at: null, completed_at: null });
    expect(jobEventFrom(parsed)).toMatchObject({ id: 5, status: "queued", repository: "o/r", startedAt: null, completedAt: null });
    const done = giteaWorkflowJobPayload({
      action: "completed",
      host: "h",
      owner: "o",
      repo: "r",
      jobId: 5,
      labels: ["x"],
      runnerName: "er-1",
      runnerId: 3,
    });
    const event = jobEventFrom(WorkflowJobPayload.parse(withoutZeroTimes(done)))!;
    expect(event).toMatchObject({ status: "completed", conclusion: "success", runnerName: "er-1", runnerId: 3 });
    expect(event.startedAt).toBeGreaterThan(0);
    expect(withoutZeroTimes("not an object")).toBe("not an object");
  });
});

describe("which endpoints a delivery may come from", () => {
  const dotcom = { name: "github.com", baseUrl: "https://github.com", forge: "github" as const };
  const ghes = { name: "ghes", baseUrl: "https://git.corp.example", forge: "github" as const };
  const gitea = { name: "gitea", baseUrl: "https://git.corp.example", forge: "gitea" as const };
  it("admits only the route's own forge, even on the same host", () => {
    expect(originMatches(gitea, { forge: "gitea", host: "git.corp.example" })).toBe(true);
    expect(originMatches(ghes, { forge: "gitea", host: "git.corp.example" })).toBe(false);
    expect(originMatches(gitea, { forge: "github", enterpriseHost: "git.corp.example" })).toBe(false);
    expect(originMatches(ghes, { forge: "github", enterpriseHost: "git.corp.example" })).toBe(true);
    expect(originMatches(dotcom, { forge: "github", enterpriseHost: null })).toBe(true);
    expect(originMatches({ name: "github.com", baseUrl: "https://github.com" }, { forge: "github", enterpriseHost: null })).toBe(true);
  });
  it("needs the Gitea host to match, port included", () => {
    expect(originMatches(gitea, { forge: "gitea", host: null })).toBe(false);
    expect(originMatches(gitea, { forge: "gitea", host: "GIT.corp.example" })).toBe(true);
    expect(originMatches(gitea, { forge: "gitea", host: "git.corp.example:3000" })).toBe(false);
    expect(originMatches({ ...gitea, baseUrl: "nope" }, { forge: "gitea", host: "nope" })).toBe(false);
  });
});

describe("Gitea scopes", () => {
  it("maps repositories, organizations and the instance (kind enterprise) to their API paths", () => {
    expect(giteaScopePath(giteaScopeOf({ kind: "repository", owner: "o w", name: "r" }))).toBe("/repos/o%20w/r");
    expect(giteaScopePath(giteaScopeOf({ kind: "organization", owner: "org", name: "org" }))).toBe("/orgs/org");
    expect(giteaScopePath(giteaScopeOf({ kind: "enterprise", owner: "anything", name: "anything" }))).toBe("/admin");
  });
});

describe("a Gitea scale set's settings", () => {
  it("has no JIT by default on Gitea, and JIT by default on GitHub", () => {
    expect(defaultJitConfigEnabled("gitea")).toBe(false);
    expect(defaultJitConfigEnabled("github")).toBe(true);
  });
  it("refuses JIT configs and intakes other than webhook on Gitea only, saying what to do", () => {
    expect(giteaScaleSetProblems("gitea", { jitConfigEnabled: false, intake: "webhook" })).toEqual([]);
    const problems = giteaScaleSetProblems("gitea", { jitConfigEnabled: true, intake: "scaleset_api" });
    expect(problems.map((p) => p.path)).toEqual(["jit_config_enabled", "intake"]);
    expect(problems[0]!.message).toContain("registration token");
    expect(giteaScaleSetProblems("github", { jitConfigEnabled: true, intake: "scaleset_api" })).toEqual([]);
  });
});
