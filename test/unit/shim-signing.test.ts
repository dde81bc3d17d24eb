import { describe, expect, it } from "vitest";
import {
  computeSignature,
  MAX_CLOCK_SKEW_SECONDS,
  requestTarget,
  type SignedRequestParts,
  signingInput,
  signRequest,
  verifySignature,
} from "../../src/providers/shim-signing";

const SECRET = "unit-test-secret-0001";
const TS = 1763800000;
const at = (seconds: number) => () => seconds * 1000;
const create: SignedRequestParts = { method: "POST", pathWithQuery: "/base/v1/instances?x=1", body: '{"name":"r-1"}' };

describe("shim request signing", () => {
  it("matches HMAC-SHA256 over ts, METHOD, path-with-query and body joined by newlines (computed independently)", async () => {
    expect(await computeSignature(SECRET, String(TS), create)).toBe(
      "sha256=bc9e24b01d0929bb9c9b51c820b8752e91edf1d96e9eeb78f17ca83fd8549951",
    );
    expect(await computeSignature(SECRET, String(TS), { method: "get", pathWithQuery: "/v1/instances", body: "" })).toBe(
      "sha256=cdbe4f157e54d5447e6b4fa8bdba18aeb200ff976c2975ff671a03d4c422d0e9",
    );
    expect(new TextDecoder().decode(signingInput(String(TS), create))).toBe('1763800000\nPOST\n/base/v1/instances?x=1\n{"name":"r-1"}');
  });

  it("signs bytes and strings alike", async () => {
    const bytes = new TextEncoder().encode(create.body as string);
    expect(await computeSignature(SECRET, "1", { ...create, body: bytes })).toBe(await computeSignature(SECRET, "1", create));
  });

  it("puts the current unix second in the timestamp header", async () => {
    const headers = await signRequest(SECRET, create, TS * 1000 + 999);
    expect(headers["X-Edgerunner-Timestamp"]).toBe(String(TS));
    expect(headers["X-Edgerunner-Signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
  });

  it("accepts its own signatures, also in upper-case hex", async () => {
    const h = await signRequest(SECRET, create, TS * 1000);
    const received = { timestamp: h["X-Edgerunner-Timestamp"], signature: h["X-Edgerunner-Signature"] };
    expect(await verifySignature(SECRET, create, received, at(TS))).toEqual({ ok: true });
    const upper = { ...received, signature: "sha256=" + received.signature.slice(7).toUpperCase() };
    expect(await verifySignature(SECRET, create, upper, at(TS))).toEqual({ ok: true });
  });

  it.each([
    ["another secret", { secret: "unit-test-secret-0002" }],
    ["another method", { parts: { ...create, method: "PUT" } }],
    ["another path", { parts: { ...create, pathWithQuery: "/v1/instances?x=1" } }],
    ["another query", { parts: { ...create, pathWithQuery: "/base/v1/instances?x=2" } }],
    ["another body", { parts: { ...create, body: '{"name":"r-2"}' } }],
    ["a body with trailing whitespace", { parts: { ...create, body: '{"name":"r-1"}\n' } }],
  ])("rejects a signature checked with %s", async (_, change: { secret?: string; parts?: SignedRequestParts }) => {
    const h = await signRequest(SECRET, create, TS * 1000);
    const received = { timestamp: h["X-Edgerunner-Timestamp"], signature: h["X-Edgerunner-Signature"] };
    expect(await verifySignature(change.secret ?? SECRET, change.parts ?? create, received, at(TS))).toEqual({
      ok: false,
      reason: "bad_signature",
    });
  });

  it("rejects a timestamp that was not signed", async () => {
    const sig = await computeSignature(SECRET, String(TS), create);
    expect(await verifySignature(SECRET, create, { timestamp: String(TS + 1), signature: sig }, at(TS))).toEqual({
      ok: false,
      reason: "bad_signature",
    });
  });

  it(`accepts up to ${MAX_CLOCK_SKEW_SECONDS} s of clock skew either way, and no more`, async () => {
    const sig = await computeSignature(SECRET, String(TS), create);
    const check = (nowSeconds: number) => verifySignature(SECRET, create, { timestamp: String(TS), signature: sig }, at(nowSeconds));
    expect(await check(TS + 300)).toEqual({ ok: true });
    expect(await check(TS - 300)).toEqual({ ok: true });
    expect(await check(TS + 301)).toEqual({ ok: false, reason: "stale_timestamp" });
    expect(await check(TS - 301)).toEqual({ ok: false, reason: "stale_timestamp" });
  });

  it.each([
    [{ timestamp: undefined, signature: "sha256=" + "0".repeat(64) }, "missing_timestamp"],
    [{ timestamp: "", signature: "sha256=" + "0".repeat(64) }, "missing_timestamp"],
    [{ timestamp: "17638e5", signature: "sha256=" + "0".repeat(64) }, "malformed_timestamp"],
    [{ timestamp: "-1763800000", signature: "sha256=" + "0".repeat(64) }, "malformed_timestamp"],
    [{ timestamp: "1763800000.5", signature: "sha256=" + "0".repeat(64) }, "malformed_timestamp"],
    [{ timestamp: String(TS), signature: null }, "missing_signature"],
    [{ timestamp: String(TS), signature: "0".repeat(64) }, "malformed_signature"],
    [{ timestamp: String(TS), signature: "sha1=" + "0".repeat(40) }, "malformed_signature"],
    [{ timestamp: String(TS), signature: "sha256=" + "0".repeat(63) }, "malformed_signature"],
    [{ timestamp: String(TS), signature: "sha256=" + "g".repeat(64) }, "malformed_signature"],
    [{ timestamp: String(TS), signature: "sha256=" + "0".repeat(64) }, "bad_signature"],
  ])("rejects %j as %s", async (received, reason) => {
    expect(await verifySignature(SECRET, create, received, at(TS))).toEqual({ ok: false, reason });
  });

  it("signs the request target as sent: base path, percent-encoding and query kept", () => {
    expect(requestTarget("https://shim.example.com/lxd/v1/instances/runner%2F1?force=true")).toBe(
      "/lxd/v1/instances/runner%2F1?force=true",
    );
    expect(requestTarget(new URL("https://shim.example.com/v1/instances"))).toBe("/v1/instances");
  });
});
