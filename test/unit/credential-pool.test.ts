import { describe, expect, it } from "vitest";
import { MAX_POOL_CREDENTIALS, PoolCredentialsInput, resolvePool } from "../../src/api/credential-pool";

const owner = { kind: "organization" as const, endpointName: "github.com", credentialsId: "own" };
const found = [
  { id: "own", name: "own-app", endpointName: "github.com" },
  { id: "a", name: "app-a", endpointName: "github.com" },
  { id: "b", name: "app-b", endpointName: "github.com" },
  { id: "g", name: "ghes-pat", endpointName: "ghes" },
];

describe("resolvePool", () => {
  it("gives the members in the order named", () => {
    expect(resolvePool(["app-b", "app-a"], found, owner)).toEqual({
      ok: true,
      members: [
        { id: "b", name: "app-b" },
        { id: "a", name: "app-a" },
      ],
    });
    expect(resolvePool([], found, owner)).toEqual({ ok: true, members: [] });
  });

  it("names every bad entry by its index: unknown, another endpoint, the entity's own", () => {
    expect(resolvePool(["app-a", "nope", "ghes-pat", "own-app"], found, owner)).toEqual({
      ok: false,
      problems: [
        { path: "pool_credentials.1", message: "unknown credentials 'nope'" },
        { path: "pool_credentials.2", message: "credentials 'ghes-pat' are for endpoint 'ghes', this organization is on 'github.com'" },
        {
          path: "pool_credentials.3",
          message: "'own-app' are this organization's own credentials (credentials_name): a pool holds only others",
        },
      ],
    });
  });
});

describe("PoolCredentialsInput", () => {
  it("takes up to the maximum of distinct names", () => {
    const names = Array.from({ length: MAX_POOL_CREDENTIALS }, (_, i) => `app-${i}`);
    expect(PoolCredentialsInput.parse(names)).toEqual(names);
  });

  it("refuses a name twice (at its second place), too many names, and names that are not resource names", () => {
    const twice = PoolCredentialsInput.safeParse(["a", "b", "a"]);
    expect(twice.success).toBe(false);
    expect(twice.error!.issues.map((i) => [i.path, i.message])).toEqual([[[2], "'a' is listed twice"]]);
    const many = PoolCredentialsInput.safeParse(Array.from({ length: MAX_POOL_CREDENTIALS + 1 }, (_, i) => `app-${i}`));
    expect(many.error!.issues.map((i) => i.message)).toEqual([`at most ${MAX_POOL_CREDENTIALS} credentials`]);
    expect(PoolCredentialsInput.safeParse(["-bad"]).success).toBe(false);
  });
});
