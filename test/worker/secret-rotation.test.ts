import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { keyringFor } from "../../src/crypto/keyring";
import { open } from "../../src/crypto/secret-box";
import { secretContext } from "../../src/crypto/secret-contexts";
import { ADMIN_TOKEN, dumpDb, seed } from "./helpers";

const NEW_KEY = btoa(String.fromCharCode(...new Uint8Array(32).fill(7)));

/** The app as it runs after an operator rotated the key. */
function callWith(keys: Partial<typeof env>, method: string, path: string) {
  return createApp().fetch(new Request(`https://edgerunner.test${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }), {
    ...env,
    ...keys,
  });
}

describe("key rotation", () => {
  it("re-seals every secret with the new key, after which the old key can go", async () => {
    const repo = await seed.repository({ webhook_secret: "rotate-me-please" });
    await seed.provider();
    const oldKey = env.ENCRYPTION_KEY;
    const rotated = { ENCRYPTION_KEY: NEW_KEY, ENCRYPTION_KEYS_PREVIOUS: oldKey };

    const res = await callWith(rotated, "POST", "/api/v1/secrets/rotate");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.resealed).toBeGreaterThanOrEqual(3);
    expect(body.current).toBe(0);

    // Running it again finds nothing left to do.
    const again = (await (await callWith(rotated, "POST", "/api/v1/secrets/rotate")).json()) as any;
    expect(again).toEqual({ key_id: body.key_id, resealed: 0, current: body.resealed });

    // Values open with the new key alone.
    const row = await env.DB.prepare("SELECT webhook_secret_enc AS v FROM entities WHERE id = ?").bind(repo.id).first<{ v: string }>();
    const newOnly = await keyringFor({ ENCRYPTION_KEY: NEW_KEY });
    expect(await open(newOnly, row!.v, secretContext.webhookSecret(repo.id))).toBe("rotate-me-please");
  });

  it("changes nothing when a value opens with no configured key (422)", async () => {
    await seed.provider();
    const before = await dumpDb();
    const res = await callWith({ ENCRYPTION_KEY: NEW_KEY, ENCRYPTION_KEYS_PREVIOUS: "" }, "POST", "/api/v1/secrets/rotate");
    expect(res.status).toBe(422);
    const body = (await res.json()) as any;
    expect(body.error).toMatch(/no configured key/);
    expect(body.details.unreadable.length).toBeGreaterThan(0);
    expect(await dumpDb()).toEqual(before);
  });
});
