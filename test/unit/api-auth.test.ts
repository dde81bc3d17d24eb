import { describe, expect, it } from "vitest";
import { accessConfig, teamDomain } from "../../src/auth/access";
import { hashApiToken, looksLikeApiToken, newApiToken } from "../../src/auth/api-token";
import { isWrite, scopeAllows } from "../../src/auth/principal";
import {
  cachedToken,
  dueForTouch,
  forgetToken,
  LAST_USED_INTERVAL_MS,
  rememberToken,
  TOKEN_CACHE_MS,
  tokenVerdict,
} from "../../src/auth/token-cache";

describe("named API tokens", () => {
  it("are edr_ and 32 random bytes, and hash to hex SHA-256", async () => {
    const a = newApiToken();
    expect(a).toMatch(/^edr_[A-Za-z0-9_-]{43}$/);
    expect(looksLikeApiToken(a)).toBe(true);
    expect(newApiToken()).not.toBe(a);
    for (const t of ["test-admin-token", "edr_short", `${a}x`, `EDR_${a.slice(4)}`]) expect(looksLikeApiToken(t), t).toBe(false);
    expect(await hashApiToken("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});

describe("scopes", () => {
  it("lets read only read, admin everything", () => {
    for (const m of ["GET", "HEAD", "OPTIONS", "get"]) expect(scopeAllows("read", m), m).toBe(true);
    for (const m of ["POST", "PUT", "PATCH", "DELETE"]) {
      expect(scopeAllows("read", m), m).toBe(false);
      expect(scopeAllows("admin", m), m).toBe(true);
      expect(isWrite(m)).toBe(true);
    }
    expect(isWrite("GET")).toBe(false);
  });
});

describe("the token cache", () => {
  const token = (over = {}) => ({
    id: crypto.randomUUID(),
    name: "t",
    scope: "read" as const,
    expiresAt: null,
    lastUsedAt: null,
    revokedAt: null,
    ...over,
  });

  it("remembers a token for TOKEN_CACHE_MS, and forgets a revoked one at once", () => {
    const t = token();
    rememberToken("h1", t, 1_000);
    expect(cachedToken("h1", 1_000 + TOKEN_CACHE_MS - 1)).toBe(t);
    expect(cachedToken("h1", 1_000 + TOKEN_CACHE_MS)).toBeNull();
    rememberToken("h2", t, 5_000);
    forgetToken(t.id);
    expect(cachedToken("h2", 5_001)).toBeNull();
  });

  it("judges revocation and expiry, and writes the last use at most once a minute", () => {
    expect(tokenVerdict(token(), 10)).toBe("ok");
    expect(tokenVerdict(token({ revokedAt: 5 }), 10)).toBe("revoked");
    expect(tokenVerdict(token({ expiresAt: 10 }), 10)).toBe("expired");
    expect(tokenVerdict(token({ expiresAt: 11 }), 10)).toBe("ok");
    expect(dueForTouch(null, 0)).toBe(true);
    expect(dueForTouch(1_000, 1_000 + LAST_USED_INTERVAL_MS - 1)).toBe(false);
    expect(dueForTouch(1_000, 1_000 + LAST_USED_INTERVAL_MS)).toBe(true);
  });
});

describe("Access configuration", () => {
  it("reads the team domain however it is written", () => {
    expect(teamDomain("myteam")).toBe("myteam.cloudflareaccess.com");
    expect(teamDomain("MyTeam.cloudflareaccess.com")).toBe("myteam.cloudflareaccess.com");
    expect(teamDomain("https://myteam.cloudflareaccess.com/")).toBe("myteam.cloudflareaccess.com");
    expect(teamDomain("my team")).toBeNull();
    expect(teamDomain("https://evil.com/x")).toBeNull();
  });

  it("is on only with both the team domain and the audience; admin unless ACCESS_SCOPE says read (or is a typo)", () => {
    expect(accessConfig({})).toBeNull();
    expect(accessConfig({ ACCESS_TEAM_DOMAIN: "t" })).toBeNull();
    expect(accessConfig({ ACCESS_AUD: "aud" })).toBeNull();
    expect(accessConfig({ ACCESS_TEAM_DOMAIN: "t", ACCESS_AUD: "aud" })).toEqual({
      issuer: "https://t.cloudflareaccess.com",
      audience: "aud",
      certsUrl: "https://t.cloudflareaccess.com/cdn-cgi/access/certs",
      scope: "admin",
    });
    expect(accessConfig({ ACCESS_TEAM_DOMAIN: "t", ACCESS_AUD: "aud", ACCESS_SCOPE: "Admin" })!.scope).toBe("admin");
    expect(accessConfig({ ACCESS_TEAM_DOMAIN: "t", ACCESS_AUD: "aud", ACCESS_SCOPE: "read" })!.scope).toBe("read");
    expect(accessConfig({ ACCESS_TEAM_DOMAIN: "t", ACCESS_AUD: "aud", ACCESS_SCOPE: "amdin" })!.scope).toBe("read");
    expect(accessConfig({ ACCESS_TEAM_DOMAIN: "t", ACCESS_AUD: "aud", ACCESS_CERTS_URL: "http://127.0.0.1:1/certs" })!.certsUrl).toBe(
      "http://127.0.0.1:1/certs",
    );
  });
});
