/** The flavor catalogue kept in a shim Worker's isolate (shims/common/catalogue-cache.ts). */
import { describe, expect, it } from "vitest";
import { CATALOGUE_TTL_MS, createCatalogueCache, type Loaded } from "../../shims/common/catalogue-cache";

const counting = <T>(answers: Loaded<T, string>[]) => {
  const load = async () => {
    load.calls++;
    return answers[Math.min(load.calls - 1, answers.length - 1)]!;
  };
  load.calls = 0;
  return load;
};

describe("catalogue cache", () => {
  it("keeps a catalogue for ten minutes per key, then loads it again", async () => {
    const cache = createCatalogueCache<string[], string>();
    let t = 1_000;
    const now = () => t;
    const load = counting([
      { ok: true, value: ["a"] },
      { ok: true, value: ["b"] },
    ]);
    expect(await cache.get("k", load, now)).toEqual({ result: { ok: true, value: ["a"] }, cached: false });
    t += CATALOGUE_TTL_MS - 1;
    expect(await cache.get("k", load, now)).toEqual({ result: { ok: true, value: ["a"] }, cached: true });
    expect((await cache.get("other", load, now)).cached).toBe(false);
    t += 1;
    expect(await cache.get("k", load, now)).toEqual({ result: { ok: true, value: ["b"] }, cached: false });
    expect(load.calls).toBe(3);
  });

  it("does not keep a failure: the next request asks the cloud again", async () => {
    const cache = createCatalogueCache<string[], string>();
    const load = counting<string[]>([
      { ok: false, error: "throttled" },
      { ok: true, value: ["a"] },
    ]);
    expect((await cache.get("k", load)).result).toEqual({ ok: false, error: "throttled" });
    expect(await cache.get("k", load)).toEqual({ result: { ok: true, value: ["a"] }, cached: false });
    await expect(cache.get("thrown", () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect((await cache.get("thrown", load)).cached).toBe(false);
  });

  it("requests arriving while a catalogue loads share that one load", async () => {
    const cache = createCatalogueCache<string[], string>();
    let release!: () => void;
    let calls = 0;
    const load = () => {
      calls++;
      return new Promise<Loaded<string[], string>>((resolve) => {
        release = () => resolve({ ok: true, value: ["a"] });
      });
    };
    const first = cache.get("k", load);
    const second = cache.get("k", load);
    release();
    expect((await Promise.all([first, second])).map((r) => r.cached)).toEqual([false, true]);
    expect(calls).toBe(1);
  });

  it("holds a bounded number of catalogues, dropping the oldest", async () => {
    const cache = createCatalogueCache<number, string>();
    for (let i = 0; i < 100; i++) await cache.get(`k${i}`, async () => ({ ok: true, value: i }));
    expect((await cache.get("k99", async () => ({ ok: true, value: -1 }))).cached).toBe(true);
    expect(await cache.get("k0", async () => ({ ok: true, value: -1 }))).toEqual({ result: { ok: true, value: -1 }, cached: false });
  });
});
