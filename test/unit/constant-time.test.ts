import { describe, expect, it } from "vitest";
import { constantTimeEqual } from "../../src/crypto/constant-time";

describe("constantTimeEqual", () => {
  it("is true only for equal strings, whatever the lengths", async () => {
    expect(await constantTimeEqual("token", "token")).toBe(true);
    expect(await constantTimeEqual("token", "tokem")).toBe(false);
    expect(await constantTimeEqual("tok", "token")).toBe(false);
    expect(await constantTimeEqual("", "token")).toBe(false);
  });
});
