import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { countingD1 } from "../../src/db/counting-d1";
import { createRunners, scaleSetWorld } from "./scaleset-world";

// What a booting machine's requests cost in D1 round trips: each of a runner's ~8 bootstrap
// requests is its own invocation, and a burst of machines waiting in line for the GitHub
// budget repeats its credentials request every minute (docs/performance.md, coordinator CPU).

const SHIM_SECRET = "bootstrap-cost-shim-secret";
const ORIGIN = "https://edgerunner.test";

/** The request's status and the D1 round trips it took, the work it left to waitUntil included. */
async function costOf(token: string, path: string): Promise<{ status: number; trips: number; text: string }> {
  const trips = { n: 0 };
  const ctx = createExecutionContext();
  const res = await createApp().fetch(
    new Request(`${ORIGIN}/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } }),
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
});
