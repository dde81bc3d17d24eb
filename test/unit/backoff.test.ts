import { describe, expect, it } from "vitest";
import {
  createAllowedAt,
  deleteRetryDelay,
  hardLimitAgainst,
  NO_CREATE_BACKOFF,
  recordCreateFailure,
  recordCreateSuccess,
} from "../../src/scaleset/backoff";

describe("delete backoff", () => {
  it("starts at 1 s, doubles, and stops at 5 minutes", () => {
    expect([0, 1, 2, 3, 4, 5, 8, 9, 10, 20].map(deleteRetryDelay)).toEqual([
      0, 1_000, 2_000, 4_000, 8_000, 16_000, 128_000, 256_000, 300_000, 300_000,
    ]);
  });
});

describe("create backoff", () => {
  const policy = { intervalMs: 10_000, hardLimit: 3 };

  it("waits failures × interval after the last failure, then hits the hard limit", () => {
    let s = NO_CREATE_BACKOFF;
    expect(createAllowedAt(s, policy)).toBe(0);
    s = recordCreateFailure(s, 1_000, policy);
    expect(createAllowedAt(s, policy)).toBe(11_000);
    s = recordCreateFailure(s, 12_000, policy);
    expect(createAllowedAt(s, policy)).toBe(32_000);
    s = recordCreateFailure(s, 40_000, policy);
    expect(s.hardLimitedAt).toBe(40_000);
    expect(createAllowedAt(s, policy)).toBeNull();
    // Failures after the limit keep the first limit time.
    expect(recordCreateFailure(s, 50_000, policy).hardLimitedAt).toBe(40_000);
  });

  it("resets on success", () => {
    const s = recordCreateFailure(recordCreateFailure(NO_CREATE_BACKOFF, 1, policy), 2, policy);
    expect(recordCreateSuccess(s)).toEqual(NO_CREATE_BACKOFF);
    expect(recordCreateSuccess(NO_CREATE_BACKOFF)).toBe(NO_CREATE_BACKOFF);
  });
});

describe("a hard limit against the scale set's updates", () => {
  const limited = { failures: 5, lastFailureAt: 1_000, hardLimitedAt: 1_000 };
  it("is lifted by an update after it was hit, and kept otherwise", () => {
    expect(hardLimitAgainst(limited, 500, 900)).toEqual({ lifted: true });
    expect(hardLimitAgainst(limited, 500, 500)).toBeNull();
  });
  it("takes the scale set's version when it was hit outside a pass", () => {
    expect(hardLimitAgainst(limited, null, 700)).toEqual({ setVersion: 700 });
  });
  it("means nothing without a hard limit", () => {
    expect(hardLimitAgainst(NO_CREATE_BACKOFF, 500, 900)).toBeNull();
  });
});
