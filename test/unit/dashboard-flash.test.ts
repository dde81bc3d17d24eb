import { describe, expect, it } from "vitest";
import { flashMessage } from "../../src/ui/flash";

describe("flashMessage", () => {
  it("gives our message for an action's key", () => {
    expect(flashMessage("reconciled")).toBe("Reconciled.");
    expect(flashMessage("force_deleting")).toMatch(/forced deletion/);
  });
  it("shows nothing for no key, an unknown one, or an inherited property's name", () => {
    for (const done of [undefined, "", "<script>", "toString", "constructor", "__proto__"]) expect(flashMessage(done)).toBeNull();
  });
});
