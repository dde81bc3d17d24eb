import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { LAST_PASS_REFRESH_MS, RETRY_FIRST_MS } from "../../../src/recovery/pass-timing";
import { hookWatchKey } from "../../../src/recovery/watch-list";
import { callsTo, jobsOf, lostJobs, lostJobsApart, pass, recoveriesOf, recoveryWorld, watchRow } from "./recovery-world";

/**
 * Delivery recovery through a repository's or organization's hook: GitHub's record of the hook's
 * deliveries is walked, the failed ones fetched back and taken in, once.
 */

const routedQueued = (scaleSetId: string) => ({ status: "queued", scale_set_id: scaleSetId });

describe("recovery through an entity's hook", () => {
  it("takes in every failed delivery once; a second pass recovers nothing and makes one list call", async () => {
    const w = await recoveryWorld();
    const ids = await lostJobs(w.github, 3);
    expect(await jobsOf(w.entityId)).toEqual({});

    const logs = vi.spyOn(console, "log").mockImplementation(() => {});
    const first = await pass();
    expect(first.recovered).toBeGreaterThanOrEqual(3);
    expect(await jobsOf(w.entityId)).toEqual(Object.fromEntries(ids.map((id) => [id, routedQueued(w.scaleSetId)])));
    const rows = (await recoveriesOf(hookWatchKey(w.entityId))).sort((a, b) => a.job_id - b.job_id);
    expect(rows.map((r) => [r.outcome, r.means, r.event, r.action, r.status_code, r.entity_id, r.job_id])).toEqual(
      ids.map((id) => ["recovered", "ingest", "workflow_job", "queued", 0, w.entityId, id]),
    );
    // One log line per recovered delivery, saying where it came from.
    const recovered = logs.mock.calls
      .map((c) => JSON.parse(String(c[0])))
      .filter((e) => e.event === "delivery_recovered" && e.watch === hookWatchKey(w.entityId));
    logs.mockRestore();
    expect(recovered).toHaveLength(3);
    expect(recovered[0]).toMatchObject({ means: "ingest", entity: w.entityId, github_event: "workflow_job", answered_status: 0 });
    // The hook was found by its URL (one list of hooks), its deliveries listed, each failure fetched once.
    expect(await callsTo(w.github, "list_hooks")).toHaveLength(1);
    expect(await callsTo(w.github, "get_hook_delivery")).toHaveLength(3);
    const watch = await watchRow(hookWatchKey(w.entityId));
    expect(watch).toMatchObject({ kind: "repository", status: "ok", hook_id: w.hookId });

    await w.github.clearRequests();
    const second = await pass();
    expect(second.newFailures).toBe(0);
    const calls = await w.github.requests();
    expect(calls.map((c) => c.operation)).toEqual(["list_hook_deliveries"]);
    expect(await recoveriesOf(hookWatchKey(w.entityId))).toHaveLength(3);
  });

  it("a quiet pass records itself at most every LAST_PASS_REFRESH_MS: each record is a row written", async () => {
    const w = await recoveryWorld();
    await lostJobs(w.github, 1);
    const t0 = Date.now();
    const lastAt = async () => (await env.DB.prepare("SELECT at FROM recovery_last_pass WHERE id = 1").first<{ at: number }>())!.at;
    // The first passes take the delivery in and move the watch on: each records itself.
    await pass({}, t0);
    expect(await lastAt()).toBe(t0);
    await pass({}, t0 + 60_000);
    const settled = await lastAt();
    // Then nothing happens: the record stays until it is LAST_PASS_REFRESH_MS old.
    await pass({}, settled + 60_000);
    expect(await lastAt()).toBe(settled);
    await pass({}, settled + LAST_PASS_REFRESH_MS);
    expect(await lastAt()).toBe(settled + LAST_PASS_REFRESH_MS);
  });

  it("skips a delivery whose GUID is stored (it reached us, though GitHub gave up waiting): recorded, never fetched", async () => {
    const w = await recoveryWorld();
    const [id] = await lostJobs(w.github, 1);
    const [delivery] = await w.github.hookDeliveries({ hook_id: w.hookId });
    await env.DB.prepare(
      "INSERT INTO webhook_deliveries (delivery_id, event, action, received_at, outcome) VALUES (?, 'workflow_job', 'queued', ?, 'routed')",
    )
      .bind(delivery!.guid, Date.now())
      .run();
    await pass();
    expect(await callsTo(w.github, "get_hook_delivery")).toHaveLength(0);
    expect((await recoveriesOf(hookWatchKey(w.entityId))).map((r) => r.outcome)).toEqual(["already_recorded"]);
    expect(await jobsOf(w.entityId)).not.toHaveProperty(String(id));
  });

  it("walks pages only down to what it saw before; a walk the page cap cut short goes on from its cursor next pass", async () => {
    const w = await recoveryWorld();
    // Two minutes apart at GitHub: further apart than the margin a walk goes below what it saw.
    await lostJobsApart(w.github, 7, 2 * 60_000);
    // Three deliveries a page, two pages a pass: the first pass reads 6 of 7, leaving a gap.
    const settings = { perPage: 3, pagesPerWatch: 2 };
    await pass(settings);
    const firstLists = await callsTo(w.github, "list_hook_deliveries");
    expect(firstLists.map((r) => r.query.cursor ?? null)).toEqual([null, expect.any(String)]);
    expect(await recoveriesOf(hookWatchKey(w.entityId))).toHaveLength(6);
    const gap = await watchRow(hookWatchKey(w.entityId));
    expect(gap!.walk_cursor).toEqual(expect.any(String));

    await w.github.clearRequests();
    await pass(settings);
    // The top walk stops at once (its first page reaches what was seen); the gap walk reads the rest.
    const lists = await callsTo(w.github, "list_hook_deliveries");
    expect(lists.map((r) => r.query.cursor ?? null)).toEqual([null, gap!.walk_cursor]);
    expect(await recoveriesOf(hookWatchKey(w.entityId))).toHaveLength(7);
    expect(Object.keys(await jobsOf(w.entityId))).toHaveLength(7);
    expect((await watchRow(hookWatchKey(w.entityId)))!.walk_cursor).toBeNull();

    await w.github.clearRequests();
    await pass(settings);
    expect((await callsTo(w.github, "list_hook_deliveries")).length).toBe(1);
  });

  it("spends no more than each credential's share of a pass; what is left is fetched next pass", async () => {
    const w = await recoveryWorld();
    await lostJobs(w.github, 4);
    // 1 list of hooks + 1 list of deliveries + 2 fetches.
    const report = await pass({ callsPerCredential: 4 });
    expect(await callsTo(w.github, "get_hook_delivery")).toHaveLength(2);
    const rows = await recoveriesOf(hookWatchKey(w.entityId));
    expect(rows.map((r) => r.outcome).sort()).toEqual(["pending", "pending", "recovered", "recovered"]);
    // A fetch the share stopped is not a failure of the delivery's.
    expect(rows.filter((r) => r.outcome === "pending").map((r) => r.attempts)).toEqual([0, 0]);
    expect(report.recovered).toBeGreaterThanOrEqual(2);

    await pass({ callsPerCredential: 4 });
    expect((await recoveriesOf(hookWatchKey(w.entityId))).map((r) => r.outcome)).toEqual([
      "recovered",
      "recovered",
      "recovered",
      "recovered",
    ]);
    expect(await callsTo(w.github, "get_hook_delivery")).toHaveLength(4);
  });

  it("a fetch GitHub fails is tried again within seconds without counting against the delivery; answers about the delivery itself do count", async () => {
    const w = await recoveryWorld();
    const [id] = await lostJobs(w.github, 1);
    await w.github.fault({ kind: "server_error", path: "/deliveries/", times: -1, status: 502 });
    const before = Date.now();
    const troubled = await pass();
    let [row] = await recoveriesOf(hookWatchKey(w.entityId));
    expect(row).toMatchObject({ outcome: "pending", attempts: 0 });
    expect(row!.detail).toMatch(/^unreachable:/);
    // A 502 may be hiding a job's `completed` (its machine billed meanwhile): back soon, not in a minute.
    expect(troubled.troubleStreak).toBe(1);
    expect(troubled.nextAt - before).toBeLessThan(60_000);
    expect(troubled.nextAt - Date.now()).toBeGreaterThan(RETRY_FIRST_MS - 1_000);
    await w.github.clearFaults();
    await w.github.fault({ kind: "forbidden", path: "/deliveries/", times: 1 });
    // An answer about the delivery is no trouble at GitHub: the interval on.
    expect((await pass()).troubleStreak).toBe(0);
    [row] = await recoveriesOf(hookWatchKey(w.entityId));
    expect(row).toMatchObject({ outcome: "pending", attempts: 1 });
    await pass();
    [row] = await recoveriesOf(hookWatchKey(w.entityId));
    expect(row).toMatchObject({ outcome: "recovered", attempts: 1 });
    expect(await jobsOf(w.entityId)).toHaveProperty(String(id));
  });

  it("an organization's hook: the org's repositories' jobs come back to the organization", async () => {
    const w = await recoveryWorld({ kind: "organization" });
    const ids = await lostJobs(w.github, 2);
    await pass();
    expect(await jobsOf(w.entityId)).toEqual(Object.fromEntries(ids.map((id) => [id, routedQueued(w.scaleSetId)])));
    expect(await watchRow(hookWatchKey(w.entityId))).toMatchObject({ kind: "organization", status: "ok", hook_id: w.hookId });
  });

  it("an entity with no hook of this coordinator is said so, and looked for again only after a while", async () => {
    const w = await recoveryWorld({ hook: false });
    await pass();
    expect(await watchRow(hookWatchKey(w.entityId))).toMatchObject({ status: "no_hook", hook_id: null });
    await w.github.clearRequests();
    await pass();
    expect(await callsTo(w.github, "list_hooks")).toHaveLength(0);
    await pass({ hookRecheckMs: 0 });
    expect(await callsTo(w.github, "list_hooks")).toHaveLength(1);
  });

  it("a delivery older than GitHub's and our keeping is recorded too old, never taken in", async () => {
    const w = await recoveryWorld();
    await lostJobs(w.github, 1);
    // Two weeks on: past GitHub's 7 days (a GHES) and the 14 days of delivery ids.
    await pass(
      { walk: { overlapMs: 60_000, firstLookBackMs: 30 * 86_400_000 }, deliveryRetentionMs: 86_400_000 },
      Date.now() + 2 * 86_400_000,
    );
    expect(await callsTo(w.github, "get_hook_delivery")).toHaveLength(0);
    expect(await jobsOf(w.entityId)).toEqual({});
  });
});
