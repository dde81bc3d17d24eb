import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { countingD1 } from "../../src/db/counting-d1";
import { inScaleSetObject } from "./helpers";
import { createRunners, scaleSetWorld } from "./scaleset-world";

// What a booting machine's requests cost in D1 round trips: each of a runner's ~8 bootstrap
// requests is its own invocation, and a burst of machines waiting in line for the GitHub
// budget repeats its credentials request every minute (docs/performance.md, coordinator CPU).

const SHIM_SECRET = "bootstrap-cost-shim-secret";
const ORIGIN = "https://edgerunner.test";

/** The request's status and the D1 round trips it took, the work it left to waitUntil included. */
async function costOf(token: string, path: string, body?: unknown): Promise<{ status: number; trips: number; text: string }> {
  const trips = { n: 0 };
  const ctx = createExecutionContext();
  const init = body === undefined ? {} : { method: "POST", body: JSON.stringify(body) };
  const res = await createApp().fetch(
    new Request(`${ORIGIN}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${token}` } }),
    { ...env, DB: countingD1(env.DB, trips) },
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, trips: trips.n, text };
}

describe("bootstrap requests: D1 round trips", () => {
  it("reads the instance and its scale set's runner setup in one round trip on every setup route", async () => {
    const s = await scaleSetWorld(SHIM_SECRET, { runner_prefix: "bc" });
    const [r] = await createRunners(s, 1);
    // GitHub's runner downloads are remembered by the isolate: the first script pays for them.
    expect((await costOf(r!.token, "/metadata/install-script")).status).toBe(200);
    for (const path of [
      "/metadata/runner-metadata",
      "/metadata/install-script",
      "/metadata/system/service-name",
      "/metadata/systemd/unit-file",
      "/metadata/system/cert-bundle",
    ]) {
      const cost = await costOf(r!.token, path);
      expect(cost.status, `${path}: ${cost.text}`).toBe(200);
      expect(cost.trips, path).toBe(1);
    }
  });

  it("a machine waiting in line for the GitHub budget: its read, setup and claim in one round trip", async () => {
    const s = await scaleSetWorld(SHIM_SECRET, { runner_prefix: "bw" });
    const [r] = await createRunners(s, 1);
    const credential = (await env.DB.prepare(
      "SELECT e.credentials_id AS id FROM scale_sets s JOIN entities e ON e.id = s.entity_id WHERE s.id = ?",
    )
      .bind(s.scaleSetId)
      .first<{ id: string }>())!.id;
    // Every reservation in the current window gets nothing (a window far ahead is open).
    await env.DB.prepare(
      "INSERT INTO github_budget (credential_id, window_start, points_used, last_grant) VALUES (?1, ?2, 0, 0) ON CONFLICT(credential_id) DO UPDATE SET window_start = ?2",
    )
      .bind(credential, 4_000_000_000_000)
      .run();
    // JIT_WAIT_SECONDS is 3 here: a few of the line's reservations (each short, each logged
    // jit_budget_short), then the claim given back. Before: the instance, the setup, the claim and
    // its keep apart.
    const logged: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void logged.push(String(line)));
    const waited = await costOf(r!.token, "/metadata/credentials/runner");
    vi.restoreAllMocks();
    expect(waited.status, waited.text).toBe(503);
    const reservations = logged.filter((l) => JSON.parse(l).event === "jit_budget_short").length;
    expect(reservations).toBeGreaterThan(0);
    // The read with the claim, the reservations, the claim given back.
    expect(waited.trips).toBe(1 + reservations + 1);
    const row = await env.DB.prepare("SELECT jit_claimed_at FROM instances WHERE name = ?")
      .bind(r!.name)
      .first<{ jit_claimed_at: number | null }>();
    expect(row!.jit_claimed_at).toBeNull();
  }, 20_000);

  it("system info: the instance's check and its write in one round trip; a runner id GitHub contradicts is written apart", async () => {
    const s = await scaleSetWorld(SHIM_SECRET, { runner_prefix: "bs" });
    const [r] = await createRunners(s, 1);
    const row = () =>
      env.DB.prepare("SELECT os_name, os_version, agent_id, reported_agent_id FROM instances WHERE name = ?").bind(r!.name).first();
    // No JIT runner id yet (minted on boot): the reported one is kept as a claim.
    const first = await costOf(r!.token, "/callbacks/system-info", { os_name: "ubuntu", os_version: "24.04", agent_id: 5 });
    expect([first.status, first.trips], first.text).toEqual([200, 1]);
    expect(await row()).toEqual({ os_name: "ubuntu", os_version: "24.04", agent_id: null, reported_agent_id: 5 });
    // GitHub gave the runner id 6 meanwhile, and the machine says 6: nothing more to record.
    await env.DB.prepare("UPDATE instances SET agent_id = 6 WHERE name = ?").bind(r!.name).run();
    const same = await costOf(r!.token, "/callbacks/system-info", { os_version: "24.10", agent_id: 6 });
    expect([same.status, same.trips]).toEqual([200, 1]);
    expect(await row()).toEqual({ os_name: "ubuntu", os_version: "24.10", agent_id: 6, reported_agent_id: 5 });
    // It says 7: a claim GitHub contradicts, decided after the read (a second round trip), recorded as nothing.
    const contradicted = await costOf(r!.token, "/callbacks/system-info", { os_name: "debian", agent_id: 7 });
    expect([contradicted.status, contradicted.trips]).toEqual([200, 2]);
    expect(await row()).toEqual({ os_name: "debian", os_version: "24.10", agent_id: 6, reported_agent_id: 5 });
  });

  it("status reports: the scale set object reads and writes each in one round trip (the route none)", async () => {
    const s = await scaleSetWorld(SHIM_SECRET, { runner_prefix: "bt" });
    const [r] = await createRunners(s, 1);
    for (const status of ["installing", "installing", "idle"]) {
      const cost = await costOf(r!.token, "/callbacks/status", { status, message: "" });
      expect([cost.status, cost.trips], cost.text).toEqual([200, 0]);
      const last = await inScaleSetObject(s.scaleSetId, (obj) => obj.invocations.status().last);
      expect([last.method, last.d1_round_trips]).toEqual(["runnerReport", 1]);
    }
  });
});
