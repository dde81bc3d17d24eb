import { describe, expect, it } from "vitest";
import { api, seed, unique } from "./helpers";

// Every field an update names reaches its column: the routes map body fields to columns in one
// list each (http/sent-fields.ts), and a field missing from it would be dropped without a word.

describe("an update writes every field it is given", () => {
  it("scale sets", async () => {
    const repo = await seed.repository();
    const set = await seed.scaleSet(`repositories/${repo.id}`);
    const change = {
      name: unique("renamed"),
      labels: ["gpu", "self-hosted"],
      min_idle_runners: 1,
      max_runners: 7,
      image: "debian:13",
      flavor: "large",
      os_type: "windows",
      os_arch: "arm64",
      bootstrap_timeout: 45,
      runner_prefix: "gpu-box",
      runner_group: "gpus",
      extra_specs: { disk_gb: 100 },
      enabled: false,
      priority: 9,
      jit_config_enabled: false,
    };
    const res = await api.put(`/api/v1/scalesets/${set.id}`, change);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject(change);
    expect((await api.get(`/api/v1/scalesets/${set.id}`)).body).toMatchObject(change);
  });

  it("GitHub endpoints", async () => {
    const name = unique("ghes");
    await api.post("/api/v1/github/endpoints", { name, base_url: "https://a.example.com", api_base_url: "https://a.example.com/api/v3" });
    const change = {
      description: "moved",
      base_url: "https://b.example.com",
      api_base_url: "https://b.example.com/api/v3",
      upload_base_url: "https://b.example.com/api/uploads",
      ca_cert_bundle: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
    };
    expect((await api.put(`/api/v1/github/endpoints/${name}`, change)).body).toMatchObject(change);
    expect((await api.get(`/api/v1/github/endpoints/${name}`)).body).toMatchObject(change);
  });

  it("providers", async () => {
    const provider = await seed.provider();
    const change = { url: "https://other-shim.example.com", description: "moved", timeout_seconds: 90 };
    expect((await api.put(`/api/v1/providers/${provider.name}`, change)).body).toMatchObject(change);
    expect((await api.get(`/api/v1/providers/${provider.name}`)).body).toMatchObject(change);
  });

  it("GitHub credentials and entities", async () => {
    const creds = await seed.patCredentials();
    const renamed = { name: unique("creds"), description: "rotated" };
    expect((await api.put(`/api/v1/github/credentials/${creds.id}`, renamed)).body).toMatchObject(renamed);
    const org = await seed.organization();
    const links = { use_parent_scale_sets: true, enterprise: null };
    expect((await api.put(`/api/v1/organizations/${org.id}`, links)).body).toMatchObject(links);
  });
});
