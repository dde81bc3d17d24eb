import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import {
  clearCredentialState,
  loadCredentialContext,
  readCache,
  writeCache,
  writeCredentialState,
} from "../../src/db/github/github-state-store";
import { seed } from "./helpers";

describe("GitHub state store", () => {
  it("writes a credential's shared state only while the credential is the one the caller loaded", async () => {
    const creds = await seed.patCredentials();
    const db = createDb(env);
    const ctx = (await loadCredentialContext(db, creds.id))!;
    expect(ctx).toMatchObject({ endpointName: "github.com", apiBaseUrl: "https://api.github.com", state: null });

    expect(await writeCredentialState(env.DB, ctx.credential, { health: "failing", failureReason: "401" }, 5)).toBe(true);
    expect((await loadCredentialContext(db, creds.id))!.state).toMatchObject({ health: "failing", failureReason: "401", updatedAt: 5 });
    // Absent fields keep their value.
    expect(await writeCredentialState(env.DB, ctx.credential, { rateLimitRemaining: 10 }, 6)).toBe(true);
    expect((await loadCredentialContext(db, creds.id))!.state).toMatchObject({ health: "failing", rateLimitRemaining: 10 });

    const replaced = { ...ctx.credential, updatedAt: ctx.credential.updatedAt - 1 };
    expect(await writeCredentialState(env.DB, replaced, { health: "ok" }, 7)).toBe(false);
    expect((await loadCredentialContext(db, creds.id))!.state).toMatchObject({ health: "failing" });

    await clearCredentialState(db, creds.id);
    expect((await loadCredentialContext(db, creds.id))!.state).toBeNull();
    expect(await loadCredentialContext(db, crypto.randomUUID())).toBeNull();
  });

  it("keeps one cached value per endpoint and key, the last one written", async () => {
    const db = createDb(env);
    expect(await readCache(db, "github.com", "k-store-test")).toBeNull();
    await writeCache(db, "github.com", "k-store-test", { a: 1 }, 10);
    await writeCache(db, "github.com", "k-store-test", { a: 2 }, 20);
    expect(await readCache(db, "github.com", "k-store-test")).toEqual({ value: { a: 2 }, fetchedAt: 20 });
  });
});
