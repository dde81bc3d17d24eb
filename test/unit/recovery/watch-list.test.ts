import { describe, expect, it } from "vitest";
import type { RecoveryEntityRow } from "../../../src/db/recovery/recovery-store";
import { GithubApiError, GithubRateLimitedError, GithubUnavailableError } from "../../../src/github/errors";
import { servedEntities } from "../../../src/recovery/served";
import { type WatchedEntity, watchList } from "../../../src/recovery/watch-list";
import { CallBudget, CallBudgetSpent, watchProblem, whatToDo } from "../../../src/recovery/watch-status";

const entity = (over: Partial<WatchedEntity> & { id: string }): WatchedEntity => ({
  kind: "repository",
  owner: "octo",
  name: "app",
  endpointName: "github.com",
  forge: "github",
  credentialsId: "cred-1",
  appWebhook: null,
  served: true,
  ...over,
});

describe("which hooks recovery watches", () => {
  it("a repository's and an organization's own hooks; an App's webhook once for every entity it feeds", () => {
    const { hooks, backstops, recovery } = watchList(
      [
        entity({ id: "r1", appWebhook: { appId: 9 }, credentialsId: "cred-b" }),
        entity({ id: "r2", name: "web", appWebhook: { appId: 9 }, credentialsId: "cred-a" }),
        entity({ id: "o1", kind: "organization", name: "" }),
      ],
      new Map(),
    );
    expect(hooks.map((h) => [h.key, h.kind, h.credentialsId, h.entities])).toEqual([
      ["hook:o1", "organization", "cred-1", ["o1"]],
      ["app:github.com:9", "app", "cred-a", ["r1", "r2"]],
      ["hook:r1", "repository", "cred-b", ["r1"]],
      ["hook:r2", "repository", "cred-a", ["r2"]],
    ]);
    expect(backstops).toEqual([]);
    expect(recovery.find((r) => r.entityId === "r1")!.means.map((m) => m.kind)).toEqual(["app", "repository"]);
  });

  it("an enterprise, a Gitea entity and a hook that cannot be read get the backstop, with the reason", () => {
    const { hooks, backstops } = watchList(
      [
        entity({ id: "e1", kind: "enterprise", owner: "acme", name: "" }),
        entity({ id: "g1", forge: "gitea" }),
        entity({ id: "r1" }),
        entity({ id: "r2", appWebhook: { appId: 3 } }),
      ],
      new Map([
        ["hook:r1", { status: "forbidden", detail: "403" }],
        ["hook:r2", { status: "no_hook", detail: null }],
      ]),
    );
    expect(backstops.map((b) => [b.entityId, b.reason])).toEqual([
      ["e1", "GitHub has no API for an enterprise webhook's deliveries"],
      ["g1", "Gitea does not show its record of webhook deliveries through its API"],
      ["r1", "its credentials may not read the hook's deliveries"],
    ]);
    // r2's own hook is missing, but its App's webhook is read: no backstop for it. Its hook is still looked for.
    expect(hooks.map((h) => h.key)).toEqual(["hook:r1", "app:github.com:3", "hook:r2"]);
  });

  it("entities whose jobs start nothing here, and Forgejo's (polled), cost nothing", () => {
    const { hooks, backstops } = watchList([entity({ id: "r1", served: false }), entity({ id: "f1", forge: "forgejo" })], new Map());
    expect(hooks).toEqual([]);
    expect(backstops).toEqual([]);
  });
});

describe("which entities are served", () => {
  const row = (over: Partial<RecoveryEntityRow> & { id: string }): RecoveryEntityRow => ({
    kind: "repository",
    owner: "octo",
    name: "app",
    endpointName: "github.com",
    forge: "github",
    credentialsId: "c",
    enterprise: null,
    useParentScaleSets: false,
    appId: null,
    ownScaleSets: false,
    ...over,
  });

  it("by a webhook scale set of its own, or of a parent it is registered to use", () => {
    const served = servedEntities([
      row({ id: "own", ownScaleSets: true }),
      row({ id: "org", kind: "organization", owner: "octo", name: "", ownScaleSets: true }),
      row({ id: "uses-org", name: "web", useParentScaleSets: true }),
      row({ id: "not-using", name: "docs" }),
      row({ id: "ent", kind: "enterprise", owner: "acme", name: "", ownScaleSets: true }),
      row({ id: "uses-ent", owner: "other", name: "x", enterprise: "ACME", useParentScaleSets: true }),
      row({ id: "app", appId: 5 }),
    ]);
    expect(Object.fromEntries(served.map((e) => [e.id, e.served]))).toEqual({
      own: true,
      org: true,
      "uses-org": true,
      "not-using": false,
      ent: true,
      "uses-ent": true,
      app: false,
    });
    expect(served.find((e) => e.id === "app")!.appWebhook).toEqual({ appId: 5 });
  });
});

describe("what a failed look means", () => {
  it("403 and 404 make the backstop step in; the rest is passing trouble", () => {
    expect(watchProblem(new GithubApiError("list_hook_deliveries", 403, "Resource not accessible by integration")).status).toBe(
      "forbidden",
    );
    expect(watchProblem(new GithubApiError("list_hook_deliveries", 404, "Not Found")).status).toBe("not_found");
    expect(watchProblem(new GithubRateLimitedError("x", Date.parse("2026-12-06T12:00:00Z")))).toEqual({
      status: "rate_limited",
      detail: "rate limited until 2026-12-06T12:00:00.000Z",
      trouble: { until: Date.parse("2026-12-06T12:00:00Z") },
    });
    expect(watchProblem(new GithubUnavailableError("get_hook_delivery", 502, 2, "Bad Gateway")).trouble).toEqual({ until: null });
    expect(watchProblem(new GithubApiError("get_hook_delivery", 422, "Unprocessable")).trouble).toBeNull();
    expect(whatToDo("repository", "forbidden")).toContain("Webhooks: read");
    expect(whatToDo("repository", "rate_limited")).toBeNull();
  });

  it("each credential gets its share of a pass's calls, and no more", () => {
    const budget = new CallBudget(2);
    budget.take("a");
    budget.take("a");
    expect(() => budget.take("a")).toThrow(CallBudgetSpent);
    budget.take("b");
    expect(budget.total).toBe(3);
    expect(budget.left("a")).toBe(0);
  });
});
