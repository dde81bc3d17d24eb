import { describe, expect, it } from "vitest";
import { giteaEndpoint } from "./gitea-setup";
import { api, dumpDb } from "./helpers";
import { login, ui } from "./ui-helpers";
import { World } from "./webhook-setup";

// The forge is a property of the endpoint: what the admin API accepts for Gitea endpoints, their
// credentials and the scale sets of their entities (docs/forges.md#gitea).

const w = new World("gitea-api");

async function expectRefused(res: Promise<{ status: number; body: any; text: string }>, path: string, before: unknown) {
  const r = await res;
  expect(r.status, r.text).toBe(400);
  expect(r.body.code).toBe("invalid_body");
  expect(r.body.details.map((d: { path: string }) => d.path)).toContain(path);
  expect(await dumpDb()).toEqual(before);
  return r;
}

describe("forge on the endpoint", () => {
  it("defaults to github, and a Gitea endpoint's API URL to <base_url>/api/v1", async () => {
    const gitea = await api.post("/api/v1/github/endpoints", { name: "gitea-one", forge: "gitea", base_url: "http://127.0.0.1:3501/" });
    expect(gitea.status, gitea.text).toBe(201);
    expect(gitea.body).toMatchObject({ forge: "gitea", api_base_url: "http://127.0.0.1:3501/api/v1" });
    const ghes = await api.post("/api/v1/github/endpoints", {
      name: "ghes-one",
      base_url: "https://ghes.one.example",
      api_base_url: "https://ghes.one.example/api/v3",
    });
    expect(ghes.body.forge).toBe("github");
    const listed = (await api.get("/api/v1/github/endpoints")).body as { name: string; forge: string }[];
    expect(listed.find((e) => e.name === "gitea-one")?.forge).toBe("gitea");
    expect(listed.find((e) => e.name === "github.com")?.forge).toBe("github");
    expect((await api.get("/api/v1/github/endpoints/gitea-one")).body.forge).toBe("gitea");
  });

  it("still needs the API URL for a github endpoint, and refuses an unknown forge", async () => {
    const before = await dumpDb();
    await expectRefused(
      api.post("/api/v1/github/endpoints", { name: "ghes-two", base_url: "https://ghes.two.example" }),
      "api_base_url",
      before,
    );
    await expectRefused(
      api.post("/api/v1/github/endpoints", {
        name: "x",
        forge: "gitlab",
        base_url: "https://x.example",
        api_base_url: "https://x.example/api",
      }),
      "forge",
      before,
    );
  });

  it("keeps the forge fixed: the same value is no change, another is refused with what to do", async () => {
    await giteaEndpoint("gitea-fixed", "127.0.0.1:3502");
    expect((await api.put("/api/v1/github/endpoints/gitea-fixed", { forge: "gitea", description: "ours" })).status).toBe(200);
    const before = await dumpDb();
    const r = await expectRefused(api.put("/api/v1/github/endpoints/gitea-fixed", { forge: "github" }), "forge", before);
    expect(r.body.details[0].message).toContain("add a new endpoint");
  });

  it("takes only tokens on a Gitea endpoint: a GitHub App is refused, saying so", async () => {
    await api.post("/api/v1/github/endpoints", { name: "gitea-apps", forge: "gitea", base_url: "http://127.0.0.1:3503" });
    const before = await dumpDb();
    const r = await expectRefused(
      api.post("/api/v1/github/credentials", {
        name: "gitea-app",
        endpoint: "gitea-apps",
        auth_type: "app",
        app: { app_id: 1, installation_id: 2, private_key: "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----" },
      }),
      "auth_type",
      before,
    );
    expect(r.body.details[0].message).toContain("auth_type pat");
  });
});

describe("scale sets on a Gitea endpoint", () => {
  let repoId: string;

  it("default to no JIT config and webhook intake", async () => {
    const { credentials } = await giteaEndpoint("gitea-ss", "127.0.0.1:3504");
    const repo = await api.post("/api/v1/repositories", {
      owner: "o",
      name: "r",
      credentials_name: credentials,
      webhook_secret: "gitea-ss-secret",
    });
    expect(repo.status, repo.text).toBe(201);
    repoId = repo.body.id;
    const id = await w.scaleSet("repositories", repoId, "gitea-default", ["ubuntu-latest"]);
    expect((await api.get(`/api/v1/scalesets/${id}`)).body).toMatchObject({ jit_config_enabled: false, intake: "webhook" });
    // A GitHub entity's scale set keeps JIT on by default.
    const gh = await w.repository("o", "r", "github-secret-o-r");
    const ghSet = await w.scaleSet("repositories", gh, "github-default", ["linux"]);
    expect((await api.get(`/api/v1/scalesets/${ghSet}`)).body.jit_config_enabled).toBe(true);
  });

  it("refuses JIT configs and other intakes, on create and on update", async () => {
    const provider = await w.provider();
    const body = { name: "gitea-jit", provider_name: provider, labels: ["x"], max_runners: 2, image: "i", flavor: "f" };
    const before = await dumpDb();
    const jit = await expectRefused(
      api.post(`/api/v1/repositories/${repoId}/scalesets`, { ...body, jit_config_enabled: true }),
      "jit_config_enabled",
      before,
    );
    expect(jit.body.details[0].message).toContain("registration token");
    await expectRefused(api.post(`/api/v1/repositories/${repoId}/scalesets`, { ...body, intake: "scaleset_api" }), "intake", before);
    const id = await w.scaleSet("repositories", repoId, "gitea-upd", ["y"]);
    const kept = await dumpDb();
    await expectRefused(api.put(`/api/v1/scalesets/${id}`, { jit_config_enabled: true }), "jit_config_enabled", kept);
  });
});

describe("the dashboard", () => {
  it("shows each entity's forge, and a Gitea enterprise as the instance", async () => {
    const { credentials } = await giteaEndpoint("gitea-ui", "127.0.0.1:3505");
    const inst = await api.post("/api/v1/enterprises", {
      name: "gitea-ui-instance",
      credentials_name: credentials,
      webhook_secret: "gitea-ui-secret",
    });
    expect(inst.status, inst.text).toBe(201);
    const { cookie } = await login();
    const page = await ui("GET", "/ui", { cookie: cookie! });
    expect(page.status).toBe(200);
    expect(page.html).toContain("<th>Forge</th>");
    const row = new RegExp(`<tr data-entity="${inst.body.id}">(.*?)</tr>`, "s").exec(page.html)?.[1] ?? "";
    expect(row).toContain("instance: gitea-ui-instance");
    expect(row).toContain("<td>gitea</td>");
  });
});
