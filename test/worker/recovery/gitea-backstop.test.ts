import { describe, expect, inject, it } from "vitest";
import { backstopKey } from "../../../src/recovery/watch-list";
import { createGiteaWorld } from "../../fake-gitea/control-client";
import { api, unique } from "../helpers";
import { jobsOf, pass, recoveriesOf, scaleSetOf, watchRow } from "./recovery-world";

/**
 * Gitea delivers each webhook once and shows its record of deliveries only in its web UI: the
 * backstop asks its Actions API for a repository's jobs by status (Gitea 1.25) instead.
 */
describe("the backstop on Gitea", () => {
  it("finds the jobs whose deliveries never came, once", async () => {
    const gitea = await createGiteaWorld(inject("fakeGiteaUrl"));
    const token = unique("gitea-token");
    await gitea.seed({ repos: ["octo/app"], orgs: ["octo"], tokens: [{ token, login: "ci", admin: true }] });
    const endpoint = unique("gitea");
    expect((await api.post("/api/v1/github/endpoints", { name: endpoint, forge: "gitea", base_url: gitea.url })).status).toBe(201);
    const creds = await api.post("/api/v1/github/credentials", {
      name: unique("gt"),
      endpoint,
      auth_type: "pat",
      pat: { oauth2_token: token },
    });
    const repo = await api.post("/api/v1/repositories", {
      owner: "octo",
      name: "app",
      credentials_name: creds.body.name,
      webhook_secret: "gitea-hook-secret-1",
    });
    expect(repo.status, repo.text).toBe(201);
    const scaleSetId = await scaleSetOf("repositories", repo.body.id, ["gitea-linux"]);
    // Jobs queued at Gitea; no delivery reaches the coordinator (workerd has no address the fake could post to).
    const jobs = await gitea.queueJobs("octo/app", ["gitea-linux"], 2);

    await pass();
    expect(await jobsOf(repo.body.id)).toEqual(Object.fromEntries(jobs.map((j) => [j.id, { status: "queued", scale_set_id: scaleSetId }])));
    expect(await watchRow(backstopKey(repo.body.id))).toMatchObject({
      status: "ok",
      detail: "Gitea does not show its record of webhook deliveries through its API",
    });
    await pass();
    expect(await recoveriesOf(backstopKey(repo.body.id))).toHaveLength(2);
  });
});
