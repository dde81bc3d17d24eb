import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { NUDGE_LEAD_MS, nudgeAfterWrite } from "../../src/scaleset/stub";

/** A SCALE_SET namespace whose objects record each nudge and answer it only when told. */
function namespace() {
  const calls: { scaleSet: string; answer: () => void }[] = [];
  const ns = {
    idFromName: (name: string) => name,
    get: (id: string) => ({
      nudge: (scaleSet: string) => new Promise<void>((answer) => calls.push({ scaleSet: `${id}/${scaleSet}`, answer })),
    }),
  };
  return { env: { SCALE_SET: ns } as unknown as Pick<Env, "SCALE_SET">, calls };
}

const turn = () => new Promise((r) => setTimeout(r, 0));

describe("nudgeAfterWrite", () => {
  it("makes one call for the deliveries that came while one was in flight, after the last of them", async () => {
    const { env, calls } = namespace();
    const first = nudgeAfterWrite(env, "ss-1");
    await turn();
    expect(calls).toHaveLength(1);
    // Three more deliveries were written while that call was under way: it may have been
    // served before their writes, so it cannot stand in for them...
    const joined = [nudgeAfterWrite(env, "ss-1"), nudgeAfterWrite(env, "ss-1"), nudgeAfterWrite(env, "ss-1")];
    await turn();
    expect(calls).toHaveLength(1);
    // ...but one call made after it returns serves all three.
    calls[0]!.answer();
    await turn();
    expect(calls).toHaveLength(2);
    calls[1]!.answer();
    expect(await Promise.all([first, ...joined])).toEqual([true, true, true, true]);
    expect(calls.map((c) => c.scaleSet)).toEqual(["ss-1/ss-1", "ss-1/ss-1"]);

    // Nothing left under way: the next delivery calls at once.
    const later = nudgeAfterWrite(env, "ss-1");
    await turn();
    expect(calls).toHaveLength(3);
    calls[2]!.answer();
    expect(await later).toBe(true);
  });

  it("keeps scale sets apart", async () => {
    const { env, calls } = namespace();
    const a = nudgeAfterWrite(env, "ss-a");
    const b = nudgeAfterWrite(env, "ss-b");
    await turn();
    expect(calls.map((c) => c.scaleSet)).toEqual(["ss-a/ss-a", "ss-b/ss-b"]);
    for (const c of calls) c.answer();
    expect(await Promise.all([a, b])).toEqual([true, true]);
  });

  it("hands over after a while: the request nudging stops, with a last call for whoever asked", async () => {
    const { env, calls } = namespace();
    let clock = 1_000_000;
    const now = () => clock;
    const lead = nudgeAfterWrite(env, "ss-3", now);
    await turn();
    const asked = nudgeAfterWrite(env, "ss-3", now);
    clock += NUDGE_LEAD_MS;
    calls[0]!.answer();
    await turn();
    // The lead is over but someone asked: one more call, and the next delivery nudges on its own.
    expect(calls).toHaveLength(2);
    const next = nudgeAfterWrite(env, "ss-3", now);
    await turn();
    expect(calls).toHaveLength(3);
    calls[1]!.answer();
    calls[2]!.answer();
    expect(await Promise.all([lead, asked, next])).toEqual([true, true, true]);
  });

  it("replaces a nudger that vanished (its request cut short) rather than waiting on it forever", async () => {
    const { env, calls } = namespace();
    let clock = 1_000_000;
    const now = () => clock;
    void nudgeAfterWrite(env, "ss-4", now); // never answered
    await turn();
    clock += 10_000;
    const fresh = nudgeAfterWrite(env, "ss-4", now);
    await turn();
    expect(calls).toHaveLength(2);
    calls[1]!.answer();
    expect(await fresh).toBe(true);
  });
});
