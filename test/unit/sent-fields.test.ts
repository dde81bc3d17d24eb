import { describe, expect, it } from "vitest";
import { sentFields } from "../../src/http/sent-fields";

describe("sentFields", () => {
  it("renames the fields a body carries to their columns", () => {
    expect(sentFields({ base_url: "https://x", description: "d" }, { base_url: "baseUrl", description: "description" })).toEqual({
      baseUrl: "https://x",
      description: "d",
    });
  });

  it("leaves out fields the body does not carry, keeps null (it clears) and false and 0", () => {
    const body: { a?: string; b?: string | null; c?: boolean; d?: number } = { b: null, c: false, d: 0 };
    expect(sentFields(body, { a: "colA", b: "colB", c: "colC", d: "colD" })).toEqual({ colB: null, colC: false, colD: 0 });
  });

  it("takes only the fields it is given columns for", () => {
    expect(sentFields({ name: "n", secret: "s" }, { name: "name" })).toEqual({ name: "n" });
  });
});
