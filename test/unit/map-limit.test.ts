import { describe, expect, it } from "vitest";
import { mapLimit } from "../../src/lib/map-limit";

const tick = () => new Promise((r) => setTimeout(r, 1));

describe("mapLimit", () => {
  it("keeps the results in the items' order whatever order they finish in", async () => {
    const out = await mapLimit([30, 10, 20, 0], 4, async (ms) => {
      await new Promise((r) => setTimeout(r, ms));
      return ms * 2;
    });
    expect(out).toEqual([60, 20, 40, 0]);
  });

  it("runs at most `limit` calls at a time, and all of them", async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    await mapLimit(
      Array.from({ length: 10 }, (_, i) => i),
      3,
      async (i) => {
        running++;
        most = Math.max(most, running);
        await tick();
        seen.push(i);
        running--;
      },
    );
    expect(most).toBe(3);
    expect(seen.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("answers an empty list with an empty list", async () => {
    expect(await mapLimit([], 5, async () => 1)).toEqual([]);
  });
});
