import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { api, expectRejectedWithoutWrites, inScaleSetObject, seed, unique } from "./helpers";
import { scaleSetWorld } from "./scaleset-world";
import { login, ui } from "./ui-helpers";

const SHIM_SECRET = "schedule-shim-secret-0001";

const workday = { name: "workday", cron: "0 8 * * MON-FRI", timezone: "Europe/Berlin", min_idle_runners: 3, prewarm: true };
const evening = { name: "evening", cron: "0 18 * * MON-FRI", timezone: "Europe/Berlin", min_idle_runners: 0 };

async function scaleSet(over: Record<string, unknown> = {}) {
  const repo = await seed.repository();
  const provider = await seed.provider();
  const res = await api.post(`/api/v1/repositories/${repo.id}/scalesets`, {
    name: unique("linux"),
    provider_name: provider.name,
    labels: ["self-hosted"],
    max_runners: 5,
    image: "ubuntu:24.04",
    flavor: "small",
    ...over,
  });
  return { res, repo, id: res.body?.id as string };
}

describe("scale set schedules: the admin API", () => {
  it("stores a schedule on create, shows it, replaces it on update and clears it with []", async () => {
    const { res, id } = await scaleSet({ schedules: [workday, evening] });
    expect(res.status, res.text).toBe(201);
    expect(res.body.schedules).toEqual([workday, { ...evening, prewarm: false }]);
    expect((await api.get(`/api/v1/scalesets/${id}`)).body.schedules).toEqual(res.body.schedules);
    expect((await api.get("/api/v1/scalesets")).body.find((s: any) => s.id === id).schedules).toHaveLength(2);

    const updated = await api.put(`/api/v1/scalesets/${id}`, { schedules: [evening] });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.schedules).toEqual([{ ...evening, prewarm: false }]);
    // Other fields leave it alone.
    expect((await api.put(`/api/v1/scalesets/${id}`, { max_runners: 6 })).body.schedules).toHaveLength(1);
    expect((await api.put(`/api/v1/scalesets/${id}`, { schedules: [] })).body.schedules).toEqual([]);
    expect((await scaleSet()).res.body.schedules).toEqual([]);
  });

  it("refuses a bad cron, an unknown zone, twice a name, too many entries and min idle above max, saying where", async () => {
    const detail = async (schedules: unknown[], over: Record<string, unknown> = {}) => {
      const repo = await seed.repository();
      const provider = await seed.provider();
      const res = await expectRejectedWithoutWrites(400, () =>
        api.post(`/api/v1/repositories/${repo.id}/scalesets`, {
          name: "linux",
          provider_name: provider.name,
          labels: ["self-hosted"],
          max_runners: 5,
          image: "ubuntu:24.04",
          flavor: "small",
          schedules,
          ...over,
        }),
      );
      expect(res.body.code).toBe("invalid_body");
      return res.body.details as { path: string; message: string }[];
    };
    expect(await detail([{ ...workday, cron: "0 25 * * *" }])).toEqual([
      { path: "schedules.0.cron", message: "invalid cron '0 25 * * *': hour '25': 25 is out of range 0-23" },
    ]);
    expect(await detail([{ ...workday, cron: "0 8 * *" }])).toEqual([
      { path: "schedules.0.cron", message: expect.stringContaining("expected 5 fields") },
    ]);
    expect(await detail([{ ...workday, timezone: "Europe/Atlantis" }])).toEqual([
      { path: "schedules.0.timezone", message: expect.stringContaining("unknown time zone 'Europe/Atlantis'") },
    ]);
    expect(await detail([workday, { ...evening, name: "workday" }])).toEqual([
      { path: "schedules.1.name", message: "two entries are named 'workday': names must differ" },
    ]);
    const many = Array.from({ length: 21 }, (_, i) => ({ ...evening, name: `e${i}` }));
    expect(await detail(many)).toEqual([{ path: "schedules", message: expect.stringContaining("at most 20 entries") }]);
    expect(await detail([{ ...workday, min_idle_runners: 6 }])).toEqual([
      { path: "schedules.0.min_idle_runners", message: "schedule 'workday' asks for 6 idle runners, above max_runners (5)" },
    ]);
    expect((await detail([{ ...workday, extra: 1 }]))[0]!.path).toBe("schedules.0");
  });

  it("refuses an update whose schedule exceeds the max kept, or whose max falls below the schedule kept", async () => {
    const { id } = await scaleSet({ schedules: [workday] });
    const above = await expectRejectedWithoutWrites(400, () =>
      api.put(`/api/v1/scalesets/${id}`, { schedules: [{ ...workday, min_idle_runners: 9 }] }),
    );
    expect(above.body.details).toEqual([
      { path: "schedules.0.min_idle_runners", message: "schedule 'workday' asks for 9 idle runners, above max_runners (5)" },
    ]);
    const lowered = await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/scalesets/${id}`, { max_runners: 2 }));
    expect(lowered.body.details).toEqual([
      { path: "max_runners", message: "schedule 'workday' asks for 3 idle runners, above max_runners (2)" },
    ]);
    const both = await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/scalesets/${id}`, { max_runners: 2, schedules: [workday] }));
    expect(both.body.details[0].path).toBe("schedules.0.min_idle_runners");
    expect((await api.put(`/api/v1/scalesets/${id}`, { max_runners: 3 })).status).toBe(200);
  });

  it("documents schedules and the status's min_idle_schedule in the OpenAPI document", async () => {
    const doc = (await api.get("/api/v1/openapi.json")).body;
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas.MinIdleScheduleEntry.properties).sort()).toEqual([
      "cron",
      "min_idle_runners",
      "name",
      "prewarm",
      "timezone",
    ]);
    expect(schemas.CreateScaleSet.properties.schedules.maxItems).toBe(20);
    expect(schemas.UpdateScaleSet.properties.schedules).toBeDefined();
    const shown = schemas.ScaleSetObjectStatus.properties.min_idle_schedule;
    expect(Object.keys(shown.properties ?? shown.anyOf.find((s: any) => s.properties).properties).sort()).toEqual([
      "entry",
      "min_idle",
      "prewarm_lead_ms",
      "since",
      "until",
    ]);
  });
});

describe("scale set schedules: the object's alarm", () => {
  // Monday 7 January 2030 in Berlin (CET, UTC+1): the working day starts at 08:00 = 07:00Z, pre-warmed
  // by the scale set's boot time (60 s) from 06:59Z, and ends at 18:00 = 17:00Z.
  const at = (iso: string) => Date.parse(iso);
  const setClock = (id: string, iso: string) =>
    inScaleSetObject(id, (obj) => {
      obj.clock = () => at(iso);
    });
  const stub = (id: string) => env.SCALE_SET.get(env.SCALE_SET.idFromName(id));
  const status = async (id: string) => (await api.get(`/api/v1/scalesets/${id}`)).body.status;
  const live = async (id: string) =>
    (
      await env.DB.prepare("SELECT name, status, runner_status FROM instances WHERE scale_set_id = ? AND status != 'deleted'")
        .bind(id)
        .all<{ name: string; status: string; runner_status: string }>()
    ).results;

  it("raises min idle at the pre-warmed start of the working day and lowers it in the evening, woken by its alarm", async () => {
    const w = await scaleSetWorld(SHIM_SECRET, {
      min_idle_runners: 0,
      max_runners: 5,
      boot_time_seconds: 60,
      schedules: [workday, evening],
    });
    const id = w.scaleSetId;
    await inScaleSetObject(id, (obj) => {
      // Nothing but the schedule arms the alarm here (no tick for a century), and idle runners go at once.
      obj.settings.tickMs = obj.settings.idleTickMs = obj.settings.quietTickMs = 100 * 365 * 24 * 3_600_000;
      obj.settings.scaleDownIdleMs = 0;
    });
    const logs = vi.spyOn(console, "log");
    const scheduled = () =>
      logs.mock.calls
        .map((c) => String(c[0]))
        .filter((l) => l.includes('"event":"min_idle_scheduled"') && l.includes(id))
        .map((l) => JSON.parse(l));

    // 07:58 Berlin: Friday evening's entry still holds; the alarm is armed for 07:59, the pre-warm.
    await setClock(id, "2030-01-07T06:58:00Z");
    expect(await runDurableObjectAlarm(stub(id))).toBe(true);
    expect((await status(id)).min_idle_schedule).toEqual({
      min_idle: 0,
      entry: "evening",
      since: "2030-01-04T17:00:00.000Z",
      until: "2030-01-07T06:59:00.000Z",
      prewarm_lead_ms: 60_000,
    });
    expect(await live(id)).toEqual([]);
    expect(await inScaleSetObject(id, (_o, state) => state.storage.getAlarm())).toBe(at("2030-01-07T06:59:00Z"));

    // The alarm at 07:59: min idle 3, three runners made, and the next change armed for 18:00.
    await setClock(id, "2030-01-07T06:59:00Z");
    expect(await runDurableObjectAlarm(stub(id))).toBe(true);
    const raised = await status(id);
    expect(raised.min_idle_schedule).toEqual({
      min_idle: 3,
      entry: "workday",
      since: "2030-01-07T06:59:00.000Z",
      until: "2030-01-07T17:00:00.000Z",
      prewarm_lead_ms: 60_000,
    });
    expect(raised.last_reconcile.summary).toMatchObject({ desired: 3 });
    expect(await live(id)).toHaveLength(3);
    expect(await w.shim.machines()).toHaveLength(3);
    expect(await inScaleSetObject(id, (obj) => obj.state.timer("schedule"))).toBe(at("2030-01-07T17:00:00Z"));

    // Another pass within the working day changes nothing and logs nothing more.
    await api.post(`/api/v1/scalesets/${id}/reconcile`);
    expect(await live(id)).toHaveLength(3);

    // The runners came up and idle; at 18:00 min idle falls to 0 and they are scaled down.
    await env.DB.prepare("UPDATE instances SET runner_status = 'idle', runner_status_changed_at = ? WHERE scale_set_id = ?")
      .bind(Date.now(), id)
      .run();
    await setClock(id, "2030-01-07T17:00:00Z");
    expect(await runDurableObjectAlarm(stub(id))).toBe(true);
    const lowered = await status(id);
    expect(lowered.min_idle_schedule).toMatchObject({ min_idle: 0, entry: "evening", until: "2030-01-08T06:59:00.000Z" });
    expect(lowered.last_reconcile.summary).toMatchObject({ desired: 0 });
    expect(await live(id)).toEqual([]);
    expect(await w.shim.machines()).toHaveLength(0);

    // One line per change: the first evaluation, the raise and the fall.
    expect(scheduled().map((l) => [l.previous_min_idle, l.min_idle, l.schedule])).toEqual([
      [null, 0, "evening"],
      [0, 3, "workday"],
      [3, 0, "evening"],
    ]);
    expect(scheduled()[1]).toMatchObject({ previous_schedule: "evening", since: "2030-01-07T06:59:00.000Z", prewarm_lead_ms: 60_000 });
    logs.mockRestore();
  });

  it("shows min idle now and the schedule on the dashboard", async () => {
    const w = await scaleSetWorld(SHIM_SECRET, { min_idle_runners: 1, max_runners: 5, schedules: [workday, evening] });
    await setClock(w.scaleSetId, "2030-01-07T10:00:00Z");
    await api.post(`/api/v1/scalesets/${w.scaleSetId}/reconcile`);
    const { cookie } = await login();
    const page = await ui("GET", `/ui/scalesets/${w.scaleSetId}`, { cookie: cookie! });
    expect(page.status).toBe(200);
    expect(page.html).toContain("3 because of schedule workday until 2030-01-07 17:00:00Z, since 2030-01-07 06:59:30Z");
    expect(page.html).toContain("workday: 0 8 * * MON-FRI (Europe/Berlin) → min idle 3, pre-warmed; evening: 0 18 * * MON-FRI");
  });
});
