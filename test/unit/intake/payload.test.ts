import { describe, expect, it } from "vitest";
import { decodeBody } from "../../../src/intake/payload";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("decodeBody", () => {
  it("reads a JSON object, keeping the text the signature covers", () => {
    expect(decodeBody(bytes('{"a":1}'), "application/json")).toEqual({ text: '{"a":1}', json: { a: 1 } });
  });

  it("reads the `payload` field of a form-encoded body, keeping the raw body as the text", () => {
    const raw = `payload=${encodeURIComponent('{"a":1}')}`;
    expect(decodeBody(bytes(raw), "application/x-www-form-urlencoded; charset=utf-8")).toEqual({ text: raw, json: { a: 1 } });
  });

  it.each([
    ["not JSON", "{", "application/json"],
    ["a JSON array", "[1]", "application/json"],
    ["JSON null", "null", "application/json"],
    ["a form without payload", "other=1", "application/x-www-form-urlencoded"],
    ["a form body sent as JSON", "payload=%7B%7D", "application/json"],
  ])("refuses %s", (_what, raw, contentType) => {
    expect(decodeBody(bytes(raw), contentType)).toBeNull();
  });
});
