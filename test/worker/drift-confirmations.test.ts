// An instance whose machine was deleted behind the provider's back, where the provider answers
// an error (not "not found") when asked about it: once it is missing from the list and a few
// checks in a row failed to confirm it, it is taken for gone and replaced.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { UNCONFIRMED_CHECKS_BEFORE_GONE } from "../../src/scaleset/drift";
import { inScaleSetObject, transitionsOf } from "./helpers";
import { queueJobs, reconcile, scaleSetWorld } from "./scaleset-world";

const SHIM_SECRET = "drift-confirmations-secret-01";

async function rows(scaleSetId: string) {
  return (
    await env.DB.prepare("SELECT * FROM instances WHERE scale_set_id = ? ORDER BY created_at").bind(scaleSetId).all<Record<string, any>>()
  ).results;
}

const driftCheck = async (scaleSetId: string) => {
  await inScaleSetObject(scaleSetId, (obj) => (obj.state.lastOrphanCheck = 0));
  return reconcile(scaleSetId);
};

describe("drift: machines the provider cannot confirm", () => {
  it("replaces an unlisted instance after repeated failed confirmations, not before", async () => {
    const w = await scaleSetWorld(SHIM_SECRET);
    await queueJobs(w.scaleSetId, 1);
    await reconcile(w.scaleSetId);
    const [first] = await rows(w.scaleSetId);
    expect(first).toMatchObject({ status: "running" });
    await w.shim.removeMachine(first!.name);
    await w.shim.addRule({
      operation: "get",
      times: 100,
      action: { type: "respond", status: 500, body: { error: "nova: unexpected error" } },
    });

    for (let check = 1; check < UNCONFIRMED_CHECKS_BEFORE_GONE; check++) {
      await driftCheck(w.scaleSetId);
      // One failed answer may be a passing fault: the instance stays.
      expect((await rows(w.scaleSetId)).find((r) => r.id === first!.id)!.status).toBe("running");
    }
    await driftCheck(w.scaleSetId);
    await reconcile(w.scaleSetId);
    const after = await rows(w.scaleSetId);
    const gone = after.find((r) => r.id === first!.id)!;
    expect(gone.status).toBe("deleted");
    const reasons = await transitionsOf(first!.id);
    expect(reasons.map((r) => r.reason)).toContainEqual(expect.stringMatching(/not listed and the provider failed to confirm it 3 times/));
    // The queued job still needs a runner: a new machine replaces the lost one.
    expect(after.filter((r) => r.id !== first!.id && r.status === "running")).toHaveLength(1);
  });
});
