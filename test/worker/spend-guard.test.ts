import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadScaleSetSnapshot } from "../../src/db/scaleset/snapshot-store";
import { machineMsInDay, utcDayStart } from "../../src/scaleset/guards/spend-guard";
import { api, expectRejectedWithoutWrites, insertInstance, seed } from "./helpers";
import { queueJobs, reconcile, scaleSetWorld } from "./scaleset-world";
import { login, ui } from "./ui-helpers";

// The spend guard (src/scaleset/guards/spend-guard.ts): machine-hours a UTC day summed in the reconcile
// snapshot's batch, the plan held back once the cap is reached, a reset that lifts it for the day;
// and the four settings of the watchdog and the guard on the admin API.

const SHIM_SECRET = "spend-guard-shim-secret-01";
const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);

afterEach(() => vi.restoreAllMocks());

describe("spend guard: machine time today, in the snapshot", () => {
  it("sums each instance's overlap with the UTC day up to now, deleted ones by their deletion time", async () => {
    const repo = await seed.repository();
    const ss = await seed.scaleSet(`repositories/${repo.id}`);
    const other = await seed.scaleSet(`repositories/${repo.id}`);
    const now = at("2025-03-10T12:00:00Z");
    const dayStart = utcDayStart(now);
    const spans: { created: string; deleted?: string; status?: string; scaleSet?: string }[] = [
      { created: "2025-03-10T10:00:00Z" }, // running since this morning: 2 h
      { created: "2025-03-09T20:00:00Z", status: "pending_delete" }, // since yesterday, still live: 12 h today
      { created: "2025-03-09T22:00:00Z", deleted: "2025-03-10T01:30:00Z" }, // across midnight: 1.5 h
      { created: "2025-03-10T03:00:00Z", deleted: "2025-03-10T03:45:00Z" }, // today only: 0.75 h
      { created: "2025-03-09T08:00:00Z", deleted: "2025-03-09T23:00:00Z" }, // yesterday only: nothing
      { created: "2025-03-01T08:00:00Z", deleted: "2025-03-02T08:00:00Z" }, // long gone (retention keeps it): nothing
      { created: "2025-03-10T09:00:00Z", scaleSet: other.id }, // another scale set's: not this one's
    ];
    for (const s of spans) {
      await insertInstance(s.scaleSet ?? ss.id, {
        status: s.deleted ? "deleted" : (s.status ?? "running"),
        created_at: at(s.created),
        status_changed_at: s.deleted ? at(s.deleted) : at(s.created),
      });
    }
    const snap = await loadScaleSetSnapshot(env.DB, ss.id, now);
    expect(snap.machineMsToday).toBe((2 + 12 + 1.5 + 0.75) * HOUR);
    // The SQL agrees with the rule's own definition, instance by instance.
    const expected = spans
      .filter((s) => !s.scaleSet)
      .reduce((sum, s) => sum + machineMsInDay(at(s.created), s.deleted ? at(s.deleted) : null, dayStart, now), 0);
    expect(snap.machineMsToday).toBe(expected);
    // The next day, only what still runs counts, from midnight.
    const tomorrow = at("2025-03-11T06:00:00Z");
    expect((await loadScaleSetSnapshot(env.DB, ss.id, tomorrow)).machineMsToday).toBe(2 * 6 * HOUR);
  });
});

describe("spend guard: in the scale set object", () => {
  it("stops creating once machine-hours today reach the cap, says so once, and a reset resumes creating", async () => {
    // Machine time today is at most (time since 00:00 UTC) per machine: right after midnight, wait
    // until two back-dated machines can have reached the cap.
    const sinceMidnight = Date.now() - utcDayStart(Date.now());
    if (sinceMidnight < 60_000) await new Promise((r) => setTimeout(r, 60_000 - sinceMidnight));

    // 0.01 machine-hours: 36 s.
    const w = await scaleSetWorld(SHIM_SECRET, { max_machine_hours_per_day: 0.01 });
    await queueJobs(w.scaleSetId, 2);
    let status = await reconcile(w.scaleSetId);
    expect(status.last_reconcile.actions).toMatchObject({ create: 2 });
    // A minute of each machine's life passes.
    await env.DB.prepare("UPDATE instances SET created_at = created_at - 60000 WHERE scale_set_id = ?").bind(w.scaleSetId).run();

    const spy = vi.spyOn(console, "log");
    await queueJobs(w.scaleSetId, 2);
    status = await reconcile(w.scaleSetId);
    expect(status.last_reconcile.summary).toMatchObject({ desired: 4, blocked: "spend_cap" });
    expect(status.last_reconcile.actions).toEqual({});
    expect(status.spend_guard).toMatchObject({ cap_machine_hours: 0.01, holding: true, lifted_by_reset: false });
    expect(status.spend_guard.used_machine_hours).toBeGreaterThanOrEqual(0.01);
    expect(status.spend_guard.message).toMatch(
      /^spend guard: [\d.]+ of 0\.01 machine-hours today; creating resumes at 00:00 UTC or after a reset$/,
    );
    expect(Date.parse(status.spend_guard.resumes_at)).toBe(utcDayStart(Date.now()) + 24 * HOUR);
    await reconcile(w.scaleSetId);
    const reached = spy.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('"event":"spend_cap_reached"'));
    expect(reached.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ event: "spend_cap_reached", scale_set: w.scaleSetId, cap_machine_hours: 0.01 }),
    ]);
    const live = async () =>
      (await env.DB.prepare("SELECT count(*) AS n FROM instances WHERE scale_set_id = ? AND status != 'deleted'").bind(w.scaleSetId).first<{
        n: number;
      }>())!.n;
    expect(await live()).toBe(2);
    expect(await w.shim.machines()).toHaveLength(2);

    // GET /scalesets/{id} and the dashboard say so.
    const shown = await api.get(`/api/v1/scalesets/${w.scaleSetId}`);
    expect(shown.body.status.spend_guard.holding).toBe(true);
    const { cookie } = await login();
    const page = await ui("GET", `/ui/scalesets/${w.scaleSetId}`, { cookie: cookie! });
    expect(page.html).toMatch(/id="spend-guard">spend guard: [\d.]+ of 0\.01 machine-hours today; creating resumes at 00:00 UTC/);
    expect(page.html).toContain("Lift spend guard");
    expect(page.html).toContain("machines go after 24h 0m unless their runner is on a job; no hard cap");

    // The reset (the dashboard's button, then the API) lifts it for the rest of the day: creating resumes at once.
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const lifted = await ui("POST", `/ui/scalesets/${w.scaleSetId}/spend-guard/reset`, { cookie: cookie!, form: { _csrf: csrf } });
    expect(lifted.status).toBe(303);
    expect(lifted.headers.get("location")).toBe(`/ui/scalesets/${w.scaleSetId}?done=spend_reset`);
    const reset = await api.post(`/api/v1/scalesets/${w.scaleSetId}/spend-guard/reset`);
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body.spend_guard).toMatchObject({ holding: false, lifted_by_reset: true, reset_at: expect.any(String) });
    expect(reset.body.spend_guard.message).toMatch(/lifted by a reset until 00:00 UTC$/);
    expect(await live()).toBe(4);
    expect(await w.shim.machines()).toHaveLength(4);
    expect((await api.get(`/api/v1/scalesets/${w.scaleSetId}`)).body.spend_reset_at).toBe(reset.body.spend_guard.reset_at);
    // Audited like every admin write.
    const audit = await env.DB.prepare("SELECT route, status, actor FROM audit_log WHERE path = ? ORDER BY id DESC")
      .bind(`/api/v1/scalesets/${w.scaleSetId}/spend-guard/reset`)
      .first();
    expect(audit).toEqual({ route: "/api/v1/scalesets/:id/spend-guard/reset", status: 200, actor: "admin_token" });
  }, 90_000);

  it("answers 404 for a reset of no scale set", async () => {
    const res = await api.post("/api/v1/scalesets/00000000-0000-4000-8000-000000000000/spend-guard/reset");
    expect(res.status).toBe(404);
  });
});

describe("scale set settings: the lifetime watchdog and the spend guard", () => {
  it("creates with the defaults (24 h, no hard cap, no spend cap) and shows them", async () => {
    const repo = await seed.repository();
    const ss = await seed.scaleSet(`repositories/${repo.id}`);
    expect(ss).toMatchObject({
      max_runner_lifetime_seconds: 86_400,
      runner_lifetime_hard_cap_seconds: null,
      max_machine_hours_per_day: null,
      spend_reset_at: null,
    });
    const set = await seed.scaleSet(`repositories/${repo.id}`, {
      max_runner_lifetime_seconds: 0,
      runner_lifetime_hard_cap_seconds: 7_200,
      max_machine_hours_per_day: 12.5,
    });
    expect(set).toMatchObject({ max_runner_lifetime_seconds: 0, runner_lifetime_hard_cap_seconds: 7_200, max_machine_hours_per_day: 12.5 });
  });

  it.each([
    ["a negative lifetime", { max_runner_lifetime_seconds: -1 }, "max_runner_lifetime_seconds", /0 \(never\) or more/],
    [
      "a hard cap under the lifetime",
      { runner_lifetime_hard_cap_seconds: 3_600 },
      "runner_lifetime_hard_cap_seconds",
      /at least max_runner_lifetime_seconds \(86400\)/,
    ],
    [
      "a zero hard cap",
      { max_runner_lifetime_seconds: 0, runner_lifetime_hard_cap_seconds: 0 },
      "runner_lifetime_hard_cap_seconds",
      /at least 1 second/,
    ],
    ["zero machine-hours", { max_machine_hours_per_day: 0 }, "max_machine_hours_per_day", /more than 0, or null/],
    ["a lifetime over 30 days", { max_runner_lifetime_seconds: 31 * 86_400 }, "max_runner_lifetime_seconds", /30 days/],
  ])("refuses %s on create, saying which field and why", async (_, body, path, message) => {
    const repo = await seed.repository();
    const provider = await seed.provider();
    const res = await expectRejectedWithoutWrites(400, () =>
      api.post(`/api/v1/repositories/${repo.id}/scalesets`, {
        name: "guarded",
        provider_name: provider.name,
        labels: ["self-hosted"],
        max_runners: 2,
        image: "i",
        flavor: "f",
        ...body,
      }),
    );
    expect(res.body.code).toBe("invalid_body");
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path, message: expect.stringMatching(message) })]));
  });

  it("checks an update's hard cap against the lifetime as stored, and changes nothing when it refuses", async () => {
    const repo = await seed.repository();
    const ss = await seed.scaleSet(`repositories/${repo.id}`, { max_runner_lifetime_seconds: 7_200 });
    const refused = await expectRejectedWithoutWrites(400, () =>
      api.put(`/api/v1/scalesets/${ss.id}`, { runner_lifetime_hard_cap_seconds: 3_600 }),
    );
    expect(refused.body.details).toEqual([
      {
        path: "runner_lifetime_hard_cap_seconds",
        message:
          "runner_lifetime_hard_cap_seconds (3600) must be at least max_runner_lifetime_seconds (7200): raise it, lower the lifetime, or set it to null for no hard cap",
      },
    ]);
    // Lowering the lifetime below a stored cap is refused the same way.
    await api.put(`/api/v1/scalesets/${ss.id}`, { runner_lifetime_hard_cap_seconds: 10_000 });
    expect((await api.put(`/api/v1/scalesets/${ss.id}`, { max_runner_lifetime_seconds: 20_000 })).status).toBe(400);
    // Both at once, or a lifetime of 0 (never) under any cap, are fine; null clears the cap.
    const both = await api.put(`/api/v1/scalesets/${ss.id}`, {
      max_runner_lifetime_seconds: 3_600,
      runner_lifetime_hard_cap_seconds: 3_600,
    });
    expect(both.body).toMatchObject({ max_runner_lifetime_seconds: 3_600, runner_lifetime_hard_cap_seconds: 3_600 });
    expect((await api.put(`/api/v1/scalesets/${ss.id}`, { max_runner_lifetime_seconds: 0 })).body.max_runner_lifetime_seconds).toBe(0);
    const cleared = await api.put(`/api/v1/scalesets/${ss.id}`, { runner_lifetime_hard_cap_seconds: null, max_machine_hours_per_day: 8 });
    expect(cleared.body).toMatchObject({ runner_lifetime_hard_cap_seconds: null, max_machine_hours_per_day: 8 });
    expect((await api.put(`/api/v1/scalesets/${ss.id}`, { max_machine_hours_per_day: null })).body.max_machine_hours_per_day).toBeNull();
  });

  it("documents the fields and the reset route in the OpenAPI document", async () => {
    const doc = (await api.get("/api/v1/openapi.json")).body;
    expect(doc.paths["/api/v1/scalesets/{id}/spend-guard/reset"].post.responses["200"]).toBeDefined();
    for (const f of ["max_runner_lifetime_seconds", "runner_lifetime_hard_cap_seconds", "max_machine_hours_per_day"]) {
      expect(doc.components.schemas.CreateScaleSet.properties[f]).toBeDefined();
      expect(doc.components.schemas.UpdateScaleSet.properties[f]).toBeDefined();
    }
    expect(doc.components.schemas.ScaleSet.properties.spend_reset_at).toBeDefined();
    expect(doc.components.schemas.ScaleSetObjectStatus.properties.spend_guard).toBeDefined();
  });
});
