import { describe, expect, it } from "vitest";
import { RunCoalescer } from "../../src/scaleset/executor/run-coalescer";

/** A pass the test releases by hand, so requests can land at a chosen moment of a run. */
function gatedPasses(acts: boolean[] = []) {
  const gates: (() => void)[] = [];
  let started = 0;
  const log: string[] = [];
  return {
    log,
    get started() {
      return started;
    },
    hooks: {
      pass: () => {
        const n = ++started;
        log.push(`pass ${n}`);
        return new Promise<boolean>((resolve) => gates.push(() => resolve(acts[n - 1] ?? false)));
      },
      after: async () => void log.push("after"),
      done: (leftOver: boolean) => void log.push(`done leftOver=${leftOver}`),
    },
    /** Lets the oldest waiting pass finish, then lets the run go on. */
    async release() {
      gates.shift()!();
      await new Promise((r) => setTimeout(r, 0));
    },
  };
}

describe("reconcile runs", () => {
  it("make one pass when nothing acts and nobody asks", async () => {
    const runs = new RunCoalescer(4);
    const p = gatedPasses();
    const run = runs.run(p.hooks);
    expect(runs.underWay).toBe(true);
    await p.release();
    await run;
    expect(p.log).toEqual(["pass 1", "after", "done leftOver=false"]);
    expect(runs.underWay).toBe(false);
  });

  it("go again while passes act, at most maxPasses times", async () => {
    const runs = new RunCoalescer(3);
    const p = gatedPasses([true, true, true, true]);
    const run = runs.run(p.hooks);
    for (let i = 0; i < 3; i++) await p.release();
    await run;
    expect(p.log).toEqual(["pass 1", "pass 2", "pass 3", "after", "done leftOver=false"]);
  });

  it("serve a request made during a pass with one more pass, and join the caller to the run", async () => {
    const runs = new RunCoalescer(4);
    const p = gatedPasses();
    const run = runs.run(p.hooks);
    const joined = runs.run({ pass: async () => expect.unreachable(), after: async () => {}, done: () => {} });
    expect(joined).toBe(run);
    runs.ask();
    await p.release();
    expect(p.started).toBe(2);
    await p.release();
    await run;
    expect(p.log).toEqual(["pass 1", "pass 2", "after", "done leftOver=false"]);
  });

  it("hand on a request made during the last pass instead of dropping it", async () => {
    const runs = new RunCoalescer(2);
    const p = gatedPasses([true, true]);
    const run = runs.run(p.hooks);
    await p.release();
    runs.ask(); // during pass 2, the last one this run may make
    await p.release();
    await run;
    expect(p.log).toEqual(["pass 1", "pass 2", "after", "done leftOver=true"]);
  });

  it("hand on a request made after the last pass, while the run finishes", async () => {
    const runs = new RunCoalescer(4);
    const p = gatedPasses();
    let askDuringAfter = true;
    const run = runs.run({
      ...p.hooks,
      after: async () => {
        if (askDuringAfter) runs.ask();
        askDuringAfter = false;
        p.log.push("after");
      },
    });
    await p.release();
    await run;
    expect(p.log).toEqual(["pass 1", "after", "done leftOver=true"]);
  });

  it("ignore asks when no run is under way, and report a pass that throws after cleaning up", async () => {
    const runs = new RunCoalescer(4);
    runs.ask();
    const log: string[] = [];
    const failing = runs.run({
      pass: async () => {
        throw new Error("boom");
      },
      after: async () => void log.push("after"),
      done: (leftOver) => void log.push(`done leftOver=${leftOver}`),
    });
    await expect(failing).rejects.toThrow("boom");
    expect(log).toEqual(["done leftOver=false"]);
    expect(runs.underWay).toBe(false);
  });
});
