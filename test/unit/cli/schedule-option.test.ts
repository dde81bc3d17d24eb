import { describe, expect, it } from "vitest";
import { UsageError } from "../../../cli/src/errors.ts";
import { parseScheduleOption } from "../../../cli/src/schedule-option.ts";
import { runCli } from "./run-cli.ts";

const run = (argv: string[], body: unknown) => runCli(argv, { body });

const ID = "0b9e7b1c-5f7a-4d3e-9a51-3c2f8e1d4a70";
const workday = { name: "workday", cron: "0 8 * * 1,3,5", timezone: "Europe/Berlin", min_idle_runners: 5, prewarm: true };

describe("--schedule", () => {
  it("reads an entry, commas of its cron included", () => {
    expect(parseScheduleOption("name=workday,cron=0 8 * * 1,3,5,tz=Europe/Berlin,min-idle=5,prewarm")).toEqual(workday);
    expect(parseScheduleOption("cron=0 18 * * MON-FRI, timezone=UTC, name=evening, min_idle_runners=0")).toEqual({
      name: "evening",
      cron: "0 18 * * MON-FRI",
      timezone: "UTC",
      min_idle_runners: 0,
      prewarm: false,
    });
    expect(parseScheduleOption("name=a,cron=* * * * *,tz=UTC,min-idle=1,prewarm=false").prewarm).toBe(false);
  });

  it("says what is wrong with an entry", () => {
    const refusal = (text: string) => {
      try {
        parseScheduleOption(text);
      } catch (err) {
        if (err instanceof UsageError) return err.message;
        throw err;
      }
      throw new Error(`'${text}' was accepted`);
    };
    expect(refusal("name=a,cron=0 8 * * *,tz=UTC")).toContain("missing min-idle");
    expect(refusal("name=a,cron=0 8 * * *")).toContain("missing tz, min-idle");
    expect(refusal("name=a,cron=0 8 * * *,tz=UTC,min-idle=many")).toContain("min-idle is a whole number, not 'many'");
    expect(refusal("name=a,zone=UTC")).toContain("unknown key 'zone'");
    expect(refusal("name=a,name=b,cron=0 8 * * *,tz=UTC,min-idle=1")).toContain("'name' given twice");
    expect(refusal("name=,cron=0 8 * * *,tz=UTC,min-idle=1")).toContain("'name' needs a value");
    expect(refusal("name=a,cron=0 8 * * *,tz=UTC,min-idle=1,prewarm=yes")).toContain("prewarm is true or false");
  });
});

describe("scaleset update and show with schedules", () => {
  it("sends every --schedule as the whole list, and [] for --clear-schedules", async () => {
    const set = await run(
      [
        "scaleset",
        "update",
        ID,
        "--schedule",
        "name=workday,cron=0 8 * * 1,3,5,tz=Europe/Berlin,min-idle=5,prewarm",
        "--schedule",
        "name=evening,cron=0 18 * * *,tz=Europe/Berlin,min-idle=0",
        "--json",
      ],
      { id: ID },
    );
    expect(set.code, set.stderr).toBe(0);
    expect(await set.requests.at(-1)!.json()).toEqual({
      schedules: [workday, { name: "evening", cron: "0 18 * * *", timezone: "Europe/Berlin", min_idle_runners: 0, prewarm: false }],
    });
    const cleared = await run(["scaleset", "update", ID, "--clear-schedules", "--json"], { id: ID });
    expect(await cleared.requests.at(-1)!.json()).toEqual({ schedules: [] });
    const both = await run(["scaleset", "update", ID, "--clear-schedules", "--schedule", "name=a,cron=* * * * *,tz=UTC,min-idle=1"], {});
    expect(both).toMatchObject({ code: 2, requests: [] });
    expect(both.stderr).toContain("not both");
    const bad = await run(["scaleset", "update", ID, "--schedule", "name=a,cron=* * * * *"], {});
    expect(bad).toMatchObject({ code: 2, requests: [] });
  });

  it("prints an updated scale set's schedule as show does, not as JSON", async () => {
    const r = await run(["scaleset", "update", ID, "--schedule", "name=workday,cron=0 8 * * 1,3,5,tz=Europe/Berlin,min-idle=5,prewarm"], {
      id: ID,
      name: "linux",
      schedules: [workday],
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^schedules: +workday: '0 8 \* \* 1,3,5' Europe\/Berlin min-idle 5 prewarm$/m);
  });

  it("shows the schedule and min idle now with why", async () => {
    const detail = {
      id: ID,
      name: "linux",
      schedules: [workday],
      status: {
        min_idle_schedule: {
          min_idle: 5,
          entry: "workday",
          since: "2030-01-07T06:59:00.000Z",
          until: "2030-01-07T17:00:00.000Z",
          prewarm_lead_ms: 60000,
        },
      },
    };
    const r = await run(["scaleset", "show", ID], detail);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^schedules: +workday: '0 8 \* \* 1,3,5' Europe\/Berlin min-idle 5 prewarm$/m);
    expect(r.stdout).toMatch(/^min_idle_now: +5 \(schedule workday until 2030-01-07T17:00:00.000Z\)$/m);
    expect(r.stdout).toMatch(/^status\.min_idle_schedule\.entry: +workday$/m);
  });
});
