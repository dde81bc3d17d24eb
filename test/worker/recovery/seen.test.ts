import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hookWatchKey } from "../../../src/recovery/watch-list";
import { api } from "../helpers";
import { find, parsePrometheus, value } from "../prometheus-parse";
import { login, ui } from "../ui-helpers";
import { lostJobs, recoveryWorld } from "./recovery-world";

/** What people see of delivery recovery: the API, /metrics, the dashboard, the setup check. */

describe("delivery recovery, seen", () => {
  it("the API, /metrics, the dashboard and the setup check say how an entity's lost deliveries are found and what was recovered", async () => {
    const w = await recoveryWorld();
    await lostJobs(w.github, 2);
    // One pass through the API, as an operator would after an outage.
    const run = await api.post("/api/v1/recovery/run");
    expect(run.status, run.text).toBe(200);
    expect(run.body).toMatchObject({ recovered: expect.any(Number), new_failures: expect.any(Number), more: false });
    expect(run.body.recovered).toBeGreaterThanOrEqual(2);

    const state = await api.get("/api/v1/recovery");
    expect(state.status).toBe(200);
    expect(state.body).toMatchObject({ enabled: true, interval_seconds: 3600, last_pass: { github_calls: expect.any(Number) } });
    const mine = state.body.entities.find((e: { entity_id: string }) => e.entity_id === w.entityId);
    expect(mine).toMatchObject({
      entity: "repository octo/app",
      means: [{ kind: "repository", watch: hookWatchKey(w.entityId), status: "ok" }],
      last_24h: { failed: 2, recovered: 2, found: 0 },
    });
    // A read token may look, not run a pass.
    const read = await api.post("/api/v1/tokens", { name: `reader-${Date.now()}`, scope: "read" });
    expect(read.status, read.text).toBe(201);
    expect((await api.get("/api/v1/recovery", { token: read.body.token })).status).toBe(200);
    expect((await api.post("/api/v1/recovery/run", undefined, { token: read.body.token })).status).toBe(403);

    const scrape = await exports.default.fetch(
      new Request("https://edgerunner.test/metrics", { headers: { authorization: "Bearer test-metrics-token" } }),
    );
    const metrics = parsePrometheus(await scrape.text());
    expect(value(metrics, "edgerunner_deliveries_recovered_total", { hook_kind: "repository", means: "ingest" })).toBeGreaterThanOrEqual(2);
    expect(value(metrics, "edgerunner_delivery_watch_ok", { watch: hookWatchKey(w.entityId) })).toBe(1);
    expect(find(metrics, "edgerunner_delivery_recovery_last_pass_timestamp_seconds")).toHaveLength(1);

    const { cookie } = await login();
    const page = await ui("GET", "/ui", { cookie: cookie! });
    expect(page.status).toBe(200);
    expect(page.html).toContain(`data-watch="${hookWatchKey(w.entityId)}"`);
    expect(page.html).toContain("24 h: 2 failed, 2 recovered");
    expect(page.html).toContain("Delivery recovery last looked for deliveries GitHub could not make");

    const doctor = await api.get("/api/v1/doctor");
    const check = doctor.body.checks.find((c: { id: string }) => c.id === `entity.recovery:${w.entityId}`);
    expect(check).toMatchObject({ status: "ok" });
    expect(check.summary).toContain("recovered from its repository hook's record of deliveries at GitHub");
    expect(check.summary).toContain("2 failed deliveries seen, 2 recovered");
  });
});
