import { expect, inject } from "vitest";
import { createTenant } from "../fake-shim/control";
import { createEndpoint, createPatCredential, newWorld } from "./github-helpers";
import { api, unique } from "./helpers";

export const SHIM_SECRET = "metrics-shim-secret-0001";
export const WEBHOOK_SECRET = "whsec-metrics-0123456789";

/** Everything a scale set needs, on the fakes: GitHub (a GHES-style endpoint, so its webhooks carry that host) and a shim. */
export async function world(scaleSetName = unique("linux"), over: Record<string, unknown> = {}) {
  const github = await newWorld();
  const credentialsId = await createPatCredential(await createEndpoint(github));
  const credentials = (await api.get(`/api/v1/github/credentials/${credentialsId}`)).body;
  const repo = await api.post("/api/v1/repositories", {
    owner: "octo",
    name: "app",
    credentials_name: credentials.name,
    webhook_secret: WEBHOOK_SECRET,
  });
  expect(repo.status, repo.text).toBe(201);
  const shim = await createTenant(inject("fakeShimUrl"), { secret: SHIM_SECRET });
  const provider = unique("shim");
  expect((await api.post("/api/v1/providers", { name: provider, url: shim.url, secret: SHIM_SECRET })).status).toBe(201);
  const ss = await api.post(`/api/v1/repositories/${repo.body.id}/scalesets`, {
    name: scaleSetName,
    provider_name: provider,
    labels: ["self-hosted", "linux"],
    max_runners: 10,
    image: "ubuntu:24.04",
    flavor: "small",
    runner_prefix: "mx",
    ...over,
  });
  expect(ss.status, ss.text).toBe(201);
  return {
    github,
    shim,
    provider,
    credentials: credentials.name as string,
    scaleSetId: ss.body.id as string,
    scaleSetName: ss.body.name as string,
  };
}
