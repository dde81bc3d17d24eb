import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import pkcs1 from "../fixtures/app-key-pkcs1.pem?raw";
import { createEndpoint, newWorld } from "./github-helpers";
import { api, call, dumpDb, seed, unique } from "./helpers";

const PAT = "ghp_plaintextTokenThatMustNeverLeak";
const WEBHOOK_SECRET = "webhook-secret-that-must-never-leak";
const PROVIDER_SECRET = "provider-secret-that-must-never-leak";
const KEY_BODY = pkcs1.split("\n")[5]!; // a line from the middle of the private key

describe("secrets", () => {
  it("are never returned by any response, nor stored in clear text in D1", async () => {
    const responses: string[] = [];
    const record = async (p: Promise<{ text: string; status: number }>) => {
      const r = await p;
      responses.push(r.text);
      return r;
    };
    // GitHub and the shim are the local fakes: the reads below ask both, and nothing leaves the machine.
    const endpoint = await createEndpoint(await newWorld());
    const patCreds = (
      (await record(
        api.post("/api/v1/github/credentials", { name: unique("pat"), endpoint, auth_type: "pat", pat: { oauth2_token: PAT } }),
      )) as any
    ).body;
    await record(
      api.post("/api/v1/github/credentials", {
        name: unique("app"),
        endpoint,
        auth_type: "app",
        app: { app_id: 1, installation_id: 2, private_key: pkcs1 },
      }),
    );
    const repo = (await record(
      api.post("/api/v1/repositories", {
        owner: "octo",
        name: "secret-test",
        credentials_name: patCreds.name,
        webhook_secret: WEBHOOK_SECRET,
      }),
    )) as any;
    const org = (await record(
      api.post("/api/v1/organizations", { name: "octo-org", credentials_name: patCreds.name, webhook_secret: WEBHOOK_SECRET }),
    )) as any;
    const provider = (await record(
      api.post("/api/v1/providers", { name: unique("p"), url: inject("fakeShimUrl"), secret: PROVIDER_SECRET }),
    )) as any;
    await record(api.put(`/api/v1/providers/${provider.body.name}`, { secret: PROVIDER_SECRET + "2" }));
    await record(api.put(`/api/v1/repositories/${repo.body.id}`, { webhook_secret: WEBHOOK_SECRET + "2" }));
    await record(api.put(`/api/v1/github/credentials/${patCreds.id}`, { pat: { oauth2_token: PAT + "2" } }));
    await seed.scaleSet(`organizations/${org.body.id}`, { provider_name: provider.body.name });

    // Everything readable through the API, including the OpenAPI document and errors.
    const doc = (await api.get("/api/v1/openapi.json")).body;
    const reads = Object.keys(doc.paths)
      .filter((p) => doc.paths[p].get)
      .map((p) =>
        p
          .replace("{name}", provider.body.name)
          .replace("/repositories/{id}", `/repositories/${repo.body.id}`)
          .replace("/organizations/{id}", `/organizations/${org.body.id}`)
          .replace("/github/credentials/{id}", `/github/credentials/${patCreds.id}`)
          .replace("{id}", repo.body.id),
      );
    for (const path of reads) await record(call("GET", path));
    expect(responses.length).toBeGreaterThan(20);

    const everything = responses.join("\n");
    for (const secret of [PAT, WEBHOOK_SECRET, PROVIDER_SECRET, KEY_BODY, "PRIVATE KEY"]) {
      expect(everything).not.toContain(secret);
    }

    const stored = JSON.stringify(await dumpDb());
    for (const secret of [PAT, WEBHOOK_SECRET, PROVIDER_SECRET, KEY_BODY, "PRIVATE KEY"]) {
      expect(stored).not.toContain(secret);
    }
    const sealed = await env.DB.prepare(
      "SELECT secret_enc AS v FROM github_credentials UNION ALL SELECT webhook_secret_enc FROM entities UNION ALL SELECT secret_enc FROM providers",
    ).all<{ v: string }>();
    expect(sealed.results.length).toBeGreaterThanOrEqual(5);
    for (const { v } of sealed.results) expect(v).toMatch(/^er1\.[0-9a-f]{8}\./);
  });
});
