import { describe, expect, it } from "vitest";
import { createKeyring, KeyringError, open, SealedValueError, seal, sealedWithOldKey } from "../../src/crypto/secret-box";

const key = (fill: number) => Buffer.alloc(32, fill).toString("base64");

describe("secret box", () => {
  it("seals to something that is not the plaintext and opens back", async () => {
    const ring = await createKeyring(key(1));
    const sealed = await seal(ring, "ghp_supersecret", "ctx:a");
    expect(sealed).not.toContain("ghp_supersecret");
    expect(sealed).toMatch(/^er1\.[0-9a-f]{8}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(await open(ring, sealed, "ctx:a")).toBe("ghp_supersecret");
  });

  it("uses a fresh IV every time", async () => {
    const ring = await createKeyring(key(1));
    expect(await seal(ring, "same", "c")).not.toBe(await seal(ring, "same", "c"));
  });

  it("does not open in another context (a ciphertext moved to another row)", async () => {
    const ring = await createKeyring(key(1));
    const sealed = await seal(ring, "secret", "providers.secret_enc:1");
    await expect(open(ring, sealed, "providers.secret_enc:2")).rejects.toThrow(SealedValueError);
  });

  it("detects tampering", async () => {
    const ring = await createKeyring(key(1));
    const sealed = await seal(ring, "secret", "c");
    const parts = sealed.split(".");
    const ct = parts[3]!;
    parts[3] = (ct[0] === "A" ? "B" : "A") + ct.slice(1);
    await expect(open(ring, parts.join("."), "c")).rejects.toThrow(SealedValueError);
    await expect(open(ring, "plaintext", "c")).rejects.toThrow(SealedValueError);
  });

  it("opens values sealed with a previous key during rotation, and seals with the new one", async () => {
    const old = await createKeyring(key(1));
    const sealedOld = await seal(old, "secret", "c");
    const rotated = await createKeyring(key(2), `${key(3)},${key(1)}`);
    expect(await open(rotated, sealedOld, "c")).toBe("secret");
    expect(sealedWithOldKey(rotated, sealedOld)).toBe(true);
    const sealedNew = await seal(rotated, "secret", "c");
    expect(sealedWithOldKey(rotated, sealedNew)).toBe(false);
    // After the old key is dropped, its values no longer open.
    await expect(open(await createKeyring(key(2)), sealedOld, "c")).rejects.toThrow(/unknown key/);
  });

  it("rejects missing or malformed keys with a clear message", async () => {
    await expect(createKeyring(undefined)).rejects.toThrow(KeyringError);
    await expect(createKeyring(Buffer.alloc(16).toString("base64"))).rejects.toThrow(/32 bytes/);
    await expect(createKeyring("not base64 !!")).rejects.toThrow(KeyringError);
    await expect(createKeyring(key(1), "short")).rejects.toThrow(/ENCRYPTION_KEYS_PREVIOUS\[0\]/);
  });
});
