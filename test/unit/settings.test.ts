import { describe, expect, it } from "vitest";
import { scaleSetSettings } from "../../src/scaleset/settings";

describe("scale set settings", () => {
  it("limits the object's outbound connections only when OUTBOUND_CONNECTIONS_PER_OBJECT is a positive integer", () => {
    expect(scaleSetSettings({}).outboundConnections).toBeNull();
    expect(scaleSetSettings({ OUTBOUND_CONNECTIONS_PER_OBJECT: "6" }).outboundConnections).toBe(6);
    for (const off of ["", "0", "-1", "2.5", "six"])
      expect(scaleSetSettings({ OUTBOUND_CONNECTIONS_PER_OBJECT: off }).outboundConnections).toBeNull();
  });
});
