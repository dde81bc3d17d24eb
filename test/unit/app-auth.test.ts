import { describe, expect, it } from "vitest";
import { fromBase64 } from "../../src/crypto/base64url";
import {
  APP_JWT_BACKDATE_S,
  APP_JWT_LIFETIME_S,
  AppKeyError,
  createAppJwt,
  importAppKey,
  pkcs1ToPkcs8,
  privateKeyPkcs8,
} from "../../src/github/app/app-auth";
import pkcs1Pem from "../fixtures/app-key-pkcs1.pem?raw";
import pkcs8Pem from "../fixtures/app-key-pkcs8.pem?raw";
import publicPem from "../fixtures/app-key-public.pem?raw";

const pemBody = (pem: string) => fromBase64(pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, ""));

describe("App private keys", () => {
  it("wraps PKCS#1 into exactly the PKCS#8 encoding of the same key", () => {
    expect(pkcs1Pem).toContain("BEGIN RSA PRIVATE KEY");
    expect(pkcs8Pem).toContain("BEGIN PRIVATE KEY");
    expect(Buffer.from(pkcs1ToPkcs8(pemBody(pkcs1Pem))).toString("hex")).toBe(Buffer.from(pemBody(pkcs8Pem)).toString("hex"));
    expect(Buffer.from(privateKeyPkcs8(pkcs8Pem))).toEqual(Buffer.from(pemBody(pkcs8Pem)));
  });

  it("accepts keys pasted with CRLF line ends and surrounding text", async () => {
    await expect(importAppKey(`key:\r\n${pkcs1Pem.replace(/\n/g, "\r\n")}\r\n`)).resolves.toBeDefined();
  });

  it("rejects what is not an RSA private key", async () => {
    await expect(importAppKey("nope")).rejects.toBeInstanceOf(AppKeyError);
    await expect(importAppKey("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----")).rejects.toBeInstanceOf(AppKeyError);
  });
});

describe("App JWT", () => {
  it.each([
    ["PKCS#1", pkcs1Pem],
    ["PKCS#8", pkcs8Pem],
  ])("is RS256, verifiable with the App's public key (%s), backdated and short-lived", async (_, pem) => {
    const now = Date.UTC(2026, 10, 22, 12, 0, 0);
    const jwt = await createAppJwt({ appId: 4242, key: await importAppKey(pem), now });
    const [h, p, s] = jwt.split(".") as [string, string, string];
    expect(JSON.parse(Buffer.from(fromBase64(h)).toString())).toEqual({ alg: "RS256", typ: "JWT" });
    const claims = JSON.parse(Buffer.from(fromBase64(p)).toString());
    expect(claims).toEqual({ iss: "4242", iat: now / 1000 - APP_JWT_BACKDATE_S, exp: now / 1000 + APP_JWT_LIFETIME_S });
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(600);

    const spki = pemBody(publicPem);
    const pub = await crypto.subtle.importKey("spki", spki, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["verify"]);
    expect(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", pub, fromBase64(s), new TextEncoder().encode(`${h}.${p}`))).toBe(true);
  });
});
