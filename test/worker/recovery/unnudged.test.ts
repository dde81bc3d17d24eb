import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { UNNUDGED_WINDOW } from "../../../src/db/recovery/recovery-store";
import { inScaleSetObject, insertInstance } from "../helpers";
import { pass, recoveryWorld, scaleSetOf } from "./recovery-world";

// A job's delivery nudges its scale set at once; one whose every nudge failed would wait for the
// scale set's next tick, 30 minutes away once it has had no machine for an hour. The pass nudges
// those scale sets (docs/github.md "Lost deliveries").

let jobIds = 8_800_000;

async function queuedJob(scaleSetId: string, entityId: string, ageMs: number): Promise<void> {
  const at = Date.now() - ageMs;
  await env.DB.prepare(
    `INSERT INTO jobs (id, run_id, repository, owner, labels, status, entity_id, scale_set_id, queued_at, created_at, updated_at)
     VALUES (?1, 1, 'octo/app', 'octo', '["self-hosted","linux"]', 'queued', ?2, ?3, ?4, ?4, ?4)`,
  )
    .bind(++jobIds, entityId, scaleSetId, at)
    .run();
}

/** How many calls the scale set's object has taken, and the last one's method. */
const calls = (scaleSetId: string) =>
  inScaleSetObject(scaleSetId, (obj) => {
    const s = obj.invocations.status();
    return { count: s.count as number, last: (s.last?.method ?? null) as string | null };
  });

describe("delivery recovery: scale sets that may have missed a nudge", () => {
  it("nudges a scale set without machines whose job has waited past a minute, and leaves the others alone", async () => {
    const w = await recoveryWorld({ hook: false });
    const missed = w.scaleSetId;
    const fresh = await scaleSetOf("repositories", w.entityId, ["self-hosted", "fresh"]);
    const old = await scaleSetOf("repositories", w.entityId, ["self-hosted", "old"]);
    const busy = await scaleSetOf("repositories", w.entityId, ["self-hosted", "busy"]);
    await queuedJob(missed, w.entityId, 2 * 60_000);
    // Its own nudge still has its chance; a tick has found this one; this one has a machine (and a 30 s tick).
    await queuedJob(fresh, w.entityId, 10_000);
    await queuedJob(old, w.entityId, UNNUDGED_WINDOW.withinMs + 60_000);
    await queuedJob(busy, w.entityId, 2 * 60_000);
    await insertInstance(busy, { status: "running" });
    const before = new Map(await Promise.all([missed, fresh, old, busy].map(async (id) => [id, await calls(id)] as const)));

    await pass();
    expect(await calls(missed)).toEqual({ count: before.get(missed)!.count + 1, last: "nudge" });
    for (const id of [fresh, old, busy]) expect(await calls(id), id).toEqual(before.get(id));
  });
});
