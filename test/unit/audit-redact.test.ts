import { describe, expect, it } from "vitest";
import { auditChanges, MAX_CHANGE_CHARS, REDACTED, redactSecrets, SECRET_FIELD } from "../../src/audit/redact";

describe("redactSecrets", () => {
  it("replaces secret fields wherever they are nested, keeping the others", () => {
    expect(
      redactSecrets({
        name: "p",
        secret: "s3cret",
        pat: { oauth2_token: "tok" },
        app: { app_id: 1, private_key: "pem", webhook_secret: "wh" },
        list: [{ webhook_secret: "a" }, "plain"],
      }),
    ).toEqual({
      name: "p",
      secret: REDACTED,
      pat: { oauth2_token: REDACTED },
      app: { app_id: 1, private_key: REDACTED, webhook_secret: REDACTED },
      list: [{ webhook_secret: REDACTED }, "plain"],
    });
  });

  it("keeps null and absent secrets as they are: clearing a secret is a visible change", () => {
    expect(redactSecrets({ webhook_secret: null })).toEqual({ webhook_secret: null });
  });

  it("redacts values that are credentials whatever their field", () => {
    const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----";
    expect(
      redactSecrets({
        extra_specs: {
          note: pem,
          gh: "ghp_0123456789abcdefghij",
          fine: "github_pat_11AAAAAAAAAAAAAAAAAAAAAA",
          ours: "edr_abcdefghijklmnopqrstuvwxyz",
        },
      }),
    ).toEqual({ extra_specs: { note: REDACTED, gh: REDACTED, fine: REDACTED, ours: REDACTED } });
    expect(redactSecrets("ghp_short")).toBe("ghp_short");
  });

  it("matches the secret field names of the API and not the harmless ones", () => {
    for (const f of ["secret", "webhook_secret", "oauth2_token", "private_key", "password", "api_key", "client_secret", "TOKEN"])
      expect(SECRET_FIELD.test(f), f).toBe(true);
    for (const f of ["name", "credentials_name", "app_id", "installation_id", "ca_cert_bundle", "keys", "tokens_used_by", "secretary"])
      expect(SECRET_FIELD.test(f), f).toBe(false);
  });
});

describe("auditChanges", () => {
  it("keeps the body and query, redacted, and nothing when there is neither", () => {
    expect(auditChanges({ secret: "x", url: "u" }, {})).toBe('{"body":{"secret":"[redacted]","url":"u"}}');
    expect(auditChanges(undefined, { force: "true" })).toBe('{"query":{"force":"true"}}');
    expect(auditChanges(undefined, {})).toBeNull();
  });

  it("records only the size of a change too big to keep", () => {
    const big = auditChanges({ description: "x".repeat(MAX_CHANGE_CHARS) }, {});
    expect(JSON.parse(big!)).toEqual({ truncated: true, chars: expect.any(Number) });
  });
});
