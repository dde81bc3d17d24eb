import { describe, expect, it } from "vitest";
import doc from "../../docs/provider-shim-protocol.md?raw";
import { computeSignature } from "../../src/providers/shim-signing";

// The worked examples in docs/provider-shim-protocol.md are what shim authors test against:
// they must stay what the code computes.
const SECRET = "example-shim-secret-do-not-use";
const TS = "1763805600";

/** The header value shown in the doc's HTTP example that starts with `requestLine`. */
function shownHeader(requestLine: string, header: string): string {
  const block = doc.slice(doc.indexOf(requestLine));
  const match = new RegExp(`^${header}: (.+)$`, "m").exec(block);
  if (!match) throw new Error(`${header} not shown after ${requestLine}`);
  return match[1]!;
}

describe("the protocol document's worked examples", () => {
  it("shows the signature the code computes for the coordinator's DELETE", async () => {
    const line = "DELETE /lxd/v1/instances/i-0f3a9c HTTP/1.1";
    expect(shownHeader(line, "X-Edgerunner-Timestamp")).toBe(TS);
    expect(shownHeader(line, "X-Edgerunner-Signature")).toBe(
      await computeSignature(SECRET, TS, { method: "DELETE", pathWithQuery: "/lxd/v1/instances/i-0f3a9c", body: "" }),
    );
    expect(JSON.parse(atob(shownHeader(line, "X-Edgerunner-Pool-Extra-Specs")))).toEqual({ disk_gb: 40, profile: "ci" });
  });

  it("shows the signature the code computes for the shim's callback, over the body shown", async () => {
    const line = "POST /api/v1/providers/lxd/callbacks HTTP/1.1";
    const block = doc.slice(doc.indexOf(line));
    const body = /^(\{"operation_id".+)$/m.exec(block)![1]!;
    expect(shownHeader(line, "X-Edgerunner-Signature")).toBe(
      await computeSignature(SECRET, TS, { method: "POST", pathWithQuery: "/api/v1/providers/lxd/callbacks", body }),
    );
  });

  it("shows the same digest in the openssl example", async () => {
    const sig = await computeSignature(SECRET, TS, { method: "DELETE", pathWithQuery: "/lxd/v1/instances/i-0f3a9c", body: "" });
    expect(doc).toContain(`# SHA2-256(stdin)= ${sig.slice("sha256=".length)}`);
  });
});
