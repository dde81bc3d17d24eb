import { describe, expect, it } from "vitest";
import { REGISTRATION_TOKEN_REISSUE_MS, registrationTokenStep } from "../../src/scaleset/runner/registration-token";

describe("registration token step", () => {
  it("mints when the claim was won", () => {
    expect(registrationTokenStep({ claimed: true, sealed: null, claimedAt: 10 }, 10)).toEqual({ kind: "mint" });
  });
  it("serves the sealed token again while it is fresh, and refuses it once it would have expired", () => {
    expect(registrationTokenStep({ claimed: false, sealed: "er1.x", claimedAt: 0 }, REGISTRATION_TOKEN_REISSUE_MS - 1)).toEqual({
      kind: "again",
    });
    expect(registrationTokenStep({ claimed: false, sealed: "er1.x", claimedAt: 0 }, REGISTRATION_TOKEN_REISSUE_MS)).toEqual({
      kind: "refuse",
      reason: "expired",
    });
  });
  it("asks a request to wait while the winner mints", () => {
    expect(registrationTokenStep({ claimed: false, sealed: null, claimedAt: 5 }, 6)).toEqual({ kind: "wait", retryAfterSeconds: 1 });
  });
  it("refuses an attempt that is gone or registers with JIT", () => {
    expect(registrationTokenStep({ claimed: false, sealed: null, claimedAt: null }, 6)).toEqual({ kind: "refuse", reason: "gone" });
  });
});
