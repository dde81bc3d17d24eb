import { describe, expect, it } from "vitest";
import { runCli } from "./run-cli";

const state = {
  enabled: true,
  interval_seconds: 60,
  last_pass: { at: "2026-12-06T10:00:00.000Z", duration_ms: 120, github_calls: 3, watches: 2 },
  entities: [
    {
      entity_id: "e1",
      entity: "repository octo/app",
      means: [{ kind: "repository", watch: "hook:e1", status: "ok", detail: null, since: "2026-12-06T09:00:00.000Z" }],
      last_24h: { failed: 4, recovered: 4, found: 0 },
    },
    {
      entity_id: "e2",
      entity: "organization octo",
      means: [
        { kind: "organization", watch: "hook:e2", status: "forbidden", detail: "403 Resource not accessible by integration", since: null },
        {
          kind: "backstop",
          watch: "backstop:e2",
          status: "ok",
          detail: null,
          since: null,
          reason: "its credentials may not read the hook's deliveries",
        },
      ],
      last_24h: { failed: 0, recovered: 0, found: 2 },
    },
  ],
};

describe("edgerunner recovery show | run", () => {
  it("shows each entity's means with their state and the last day's figures, and lists the problems", async () => {
    const r = await runCli(["recovery", "show"], { body: state });
    expect(r.code).toBe(0);
    expect(new URL(r.requests[0]!.url).pathname).toBe("/api/v1/recovery");
    expect(r.stdout).toContain("Every 60 s; last pass 2026-12-06T10:00:00.000Z (3 GitHub calls).");
    expect(r.stdout).toMatch(/repository octo\/app\s+repo hook \(ok\)\s+4\s+4\s+0/);
    expect(r.stdout).toContain("org hook (forbidden), backstop (ok)");
    expect(r.stdout).toContain("organization octo, org hook: forbidden (403 Resource not accessible by integration)");
  });

  it("run: a pass now, and what it did", async () => {
    const r = await runCli(["recovery", "run"], {
      body: {
        at: "2026-12-06T10:00:00.000Z",
        duration_ms: 80,
        github_calls: 5,
        watches: 2,
        new_failures: 3,
        recovered: 3,
        backstop_found: 1,
        more: false,
      },
    });
    expect(r.code).toBe(0);
    expect(r.requests[0]!.method).toBe("POST");
    expect(new URL(r.requests[0]!.url).pathname).toBe("/api/v1/recovery/run");
    expect(r.stdout).toBe("3 new failed deliveries, 3 recovered, 1 jobs found by the backstop (2 watches, 5 GitHub calls, 80 ms).\n");
  });
});
