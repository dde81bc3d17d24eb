import { describe, expect, it } from "vitest";
import { parseDuration } from "../../../cli/src/duration.ts";
import { runCli } from "./run-cli.ts";

// The lifetime watchdog's and the spend guard's flags on `scaleset create/update`, and
// `scaleset spend-reset`, against a fake API: what the CLI sends.

const ID = "0b9e7b1c-5f7a-4d3e-9a51-3c2f8e1d4a70";

const run = (argv: string[], body: unknown = { id: ID }) => runCli(argv, { body });

describe("parseDuration", () => {
  it.each([
    ["24h", 86_400],
    ["90m", 5_400],
    ["1d12h", 129_600],
    ["3600", 3_600],
    ["45s", 45],
    ["0", 0],
    ["2H", 7_200],
  ])("%s is %i seconds", (text, seconds) => {
    expect(parseDuration(text, "max-lifetime")).toBe(seconds);
  });

  it.each(["", "h", "24x", "1.5h", "-1h", "24h foo", "never"])("refuses %j, naming the flag", (text) => {
    expect(() => parseDuration(text, "max-lifetime")).toThrow(/--max-lifetime: a duration such as 24h/);
  });
});

describe("scaleset lifetime and spend guard flags", () => {
  it("update sends the lifetime and hard cap in seconds and the machine-hours as a number", async () => {
    const r = await run([
      "scaleset",
      "update",
      ID,
      "--max-lifetime",
      "24h",
      "--hard-lifetime-cap",
      "2d",
      "--max-machine-hours",
      "12.5",
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(await r.requests.at(-1)!.json()).toEqual({
      max_runner_lifetime_seconds: 86_400,
      runner_lifetime_hard_cap_seconds: 172_800,
      max_machine_hours_per_day: 12.5,
    });
  });

  it("0 is a lifetime of never; none clears the hard cap and the spend cap", async () => {
    const r = await run(["scaleset", "update", ID, "--max-lifetime", "0", "--hard-lifetime-cap", "none", "--max-machine-hours", "none"]);
    expect(r.code, r.stderr).toBe(0);
    expect(await r.requests.at(-1)!.json()).toEqual({
      max_runner_lifetime_seconds: 0,
      runner_lifetime_hard_cap_seconds: null,
      max_machine_hours_per_day: null,
    });
  });

  it("refuses a bad value before sending anything", async () => {
    const hours = await run(["scaleset", "update", ID, "--max-machine-hours", "lots"]);
    expect(hours.code).toBe(2);
    expect(hours.stderr).toContain('--max-machine-hours: a number of hours (12, 7.5) or none, not "lots"');
    const life = await run(["scaleset", "update", ID, "--max-lifetime", "none"]);
    expect(life.code).toBe(2);
    expect(life.stderr).toContain("--max-lifetime: a duration such as 24h");
    expect([...hours.requests, ...life.requests]).toEqual([]);
  });

  it("spend-reset posts to the scale set's spend guard reset", async () => {
    const r = await run(["scaleset", "spend-reset", ID, "--json"], { scale_set_id: ID, spend_guard: null });
    expect(r.code, r.stderr).toBe(0);
    expect(r.requests.at(-1)!.method).toBe("POST");
    expect(r.requests.at(-1)!.url).toBe(`https://er.example.com/api/v1/scalesets/${ID}/spend-guard/reset`);
    expect(JSON.parse(r.stdout)).toEqual({ scale_set_id: ID, spend_guard: null });
  });
});
