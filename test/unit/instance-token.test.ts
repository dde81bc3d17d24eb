import { describe, expect, it } from "vitest";
import { isCanonicalBase64Url } from "../../src/crypto/secret-box";
import { mintInstanceToken, readInstanceToken } from "../../src/scaleset/instance-token";

const SECRET = "instance-token-unit-secret";
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

const mint = (instance = "er-abc123") =>
  mintInstanceToken(SECRET, { instance, scaleSetId: "ss-1", createAttempt: 1, bootstrapTimeoutMinutes: 20 }, Date.now());
const read = (token: string) => readInstanceToken(SECRET, token);

/** The segment with its last character changed in the bits that carry no data. */
function flipUnusedBits(segment: string): string {
  const unused = { 2: 4, 3: 2 }[segment.length % 4 as 2 | 3];
  if (!unused) throw new Error(`segment of length ${segment.length} has no unused bits`);
  const last = ALPHABET.indexOf(segment.at(-1)!);
  return segment.slice(0, -1) + ALPHABET[last ^ 1]!;
}

const replaceSegment = (token: string, i: number, segment: string) => token.split(".").map((s, j) => (j === i ? segment : s)).join(".");

describe("instance tokens: one spelling only", () => {
  it("reads back the token it minted", async () => {
    expect(await read(await mint())).toMatchObject({ sub: "er-abc123", ss: "ss-1", att: 1 });
  });

  it("refuses an appended = on any segment", async () => {
    const token = await mint();
    for (const i of [0, 1, 2]) {
      const seg = token.split(".")[i]!;
      for (const pad of ["=", "==", "==="]) expect(await read(replaceSegment(token, i, seg + pad)), `segment ${i} + ${pad}`).toBeNull();
    }
    expect(await read(`${token}=`)).toBeNull();
  });

  it("refuses a last character changed only in its unused bits", async () => {
    const token = await mint();
    const [header, payload, signature] = token.split(".");
    // HS256 signatures are 32 bytes: 43 characters, the last one carrying 2 unused bits.
    expect(signature!.length % 4).toBe(3);
    expect(await read(replaceSegment(token, 2, flipUnusedBits(signature!)))).toBeNull();
    for (const [i, seg] of [header!, payload!].entries()) {
      if (seg.length % 4 !== 0) expect(await read(replaceSegment(token, i, flipUnusedBits(seg))), `segment ${i}`).toBeNull();
    }
  });

  it("refuses characters outside the base64url alphabet", async () => {
    // A token whose signature has a - or _, which the standard alphabet spells + or /.
    let token = "";
    for (let n = 0; !/[-_]/.test(token.split(".")[2] ?? ""); n++) token = await mint(`er-${n}`);
    expect(await read(token)).not.toBeNull();
    const sig = token.split(".")[2]!;
    expect(await read(replaceSegment(token, 2, sig.replaceAll("-", "+").replaceAll("_", "/")))).toBeNull();
    for (const bad of [" ", "\n", "*", "%", "é"]) {
      expect(await read(replaceSegment(token, 2, sig.slice(0, 10) + bad + sig.slice(10))), JSON.stringify(bad)).toBeNull();
    }
    expect(await read(`${token}.`)).toBeNull();
  });

  it("isCanonicalBase64Url accepts what toBase64Url writes and nothing else", () => {
    for (const ok of ["", "AA", "AAA", "AAAA", "-_8", "QQ", "QUI"]) expect(isCanonicalBase64Url(ok), ok).toBe(true);
    for (const bad of ["A", "QR", "QUJ", "QQ==", "QQ=", "+/8", "QU I", "QUI\n", "AAAAA"]) expect(isCanonicalBase64Url(bad), bad).toBe(false);
  });
});
