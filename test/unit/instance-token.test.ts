import { describe, expect, it, vi } from "vitest";
import { isCanonicalBase64url } from "../../src/crypto/base64url";
import { mintInstanceToken, readInstanceToken } from "../../src/scaleset/runner/instance-token";

const SECRET = "unit-test-instance-secret";
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

async function token() {
  return mintInstanceToken(SECRET, { instance: "runner-1", scaleSetId: "ss-1", createAttempt: 1, bootstrapTimeoutMinutes: 20 }, Date.now());
}

/** The same last character with other bits in the part the decoder throws away. */
function sameBytesOtherChar(segment: string): string {
  const unused = segment.length % 4 === 2 ? 4 : 2;
  const i = ALPHABET.indexOf(segment.at(-1)!);
  const other = ALPHABET[i ^ 1]!;
  expect(unused).toBeGreaterThan(0);
  return segment.slice(0, -1) + other;
}

describe("instance tokens", () => {
  it("verify as minted", async () => {
    expect(await readInstanceToken(SECRET, await token())).toMatchObject({ sub: "runner-1", ss: "ss-1", att: 1 });
  });

  it("refuse a signature whose last character differs only in unused bits", async () => {
    const t = await token();
    const [h, p, sig] = t.split(".") as [string, string, string];
    // A SHA-256 signature is 32 bytes: 43 characters, the last carrying 2 unused bits.
    expect(sig.length % 4).toBe(3);
    expect(await readInstanceToken(SECRET, `${h}.${p}.${sameBytesOtherChar(sig)}`)).toBeNull();
  });

  it("refuse padding, whitespace and characters outside base64url", async () => {
    const t = await token();
    const [h, p, sig] = t.split(".") as [string, string, string];
    for (const bad of [
      `${t}=`,
      `${t}==`,
      `${h}.${p}.${sig}%3D`,
      `${h}.${p}.+${sig.slice(1)}`,
      `${h}.${p}.${sig.slice(0, -1)}/`,
      `${h}=.${p}.${sig}`,
      ` ${t}`,
      `${t}.`,
    ]) {
      expect(await readInstanceToken(SECRET, bad), bad).toBeNull();
    }
  });

  it("refuse another secret and a changed payload", async () => {
    const t = await token();
    expect(await readInstanceToken("another-secret", t)).toBeNull();
    const [h, , sig] = t.split(".");
    const forged = btoa(JSON.stringify({ sub: "runner-2", ss: "ss-1", att: 1, iat: 1, exp: 9_999_999_999 })).replace(/=+$/, "");
    expect(await readInstanceToken(SECRET, `${h}.${forged}.${sig}`)).toBeNull();
  });
});

describe("instance token key", () => {
  it("is imported once per secret, not for every token minted or read", async () => {
    const imports = vi.spyOn(crypto.subtle, "importKey");
    try {
      const secret = `key-once-${Math.random()}`;
      const claims = { instance: "runner-1", scaleSetId: "ss-1", createAttempt: 1, bootstrapTimeoutMinutes: 20 };
      const t = await mintInstanceToken(secret, claims, Date.now());
      for (let i = 0; i < 3; i++) expect(await readInstanceToken(secret, t)).toMatchObject({ sub: "runner-1" });
      expect(imports).toHaveBeenCalledTimes(1);
      // Another secret gets its own key: the old one does not verify under it.
      expect(await readInstanceToken(`${secret}-rotated`, t)).toBeNull();
      expect(imports).toHaveBeenCalledTimes(2);
    } finally {
      imports.mockRestore();
    }
  });
});

describe("isCanonicalBase64url", () => {
  it.each([
    ["", true],
    ["AA", true],
    ["AB", false],
    ["AAA", true],
    ["AAB", false],
    ["AAAA", true],
    ["A", false],
    ["AA==", false],
    ["A+A/", false],
    ["-_-_", true],
  ])("%j → %s", (s, ok) => {
    expect(isCanonicalBase64url(s)).toBe(ok);
  });
});
