// What the benchmarks, the e2e scenarios and the browser tests set up at a coordinator they started
// (bench/harness.mjs starts it): a repository on the fake GitHub behind a fake shim, and the
// webhooks GitHub would deliver for it. Loopback only.

import { createHmac, randomBytes, randomUUID } from "node:crypto";

/**
 * A repository on the fake GitHub with PAT credentials, a fake shim tenant registered as a
 * provider (`providerOver`: more of its fields, e.g. timeout_seconds): everything a scale set needs.
 */
export async function fakeWorld(coordinator, fakeGithubUrl, fakeShimUrl, secret = "bench-shim-secret-000001", providerOver = {}) {
  const world = await (await fetch(`${fakeGithubUrl}/_fake/worlds`, { method: "POST" })).json();
  await fetch(`${world.url}/_fake/seed`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ repos: ["octo/app"], orgs: ["octo"], pats: [{ token: "ghp_bench", login: "bench" }] }),
  });
  const tag = randomBytes(3).toString("hex");
  await coordinator.api("POST", "/github/endpoints", {
    name: `fake-${tag}`,
    base_url: "https://github.example.test",
    api_base_url: world.url,
  });
  await coordinator.api("POST", "/github/credentials", {
    name: `pat-${tag}`,
    endpoint: `fake-${tag}`,
    auth_type: "pat",
    pat: { oauth2_token: "ghp_bench" },
  });
  const webhookSecret = `whsec-${tag}-bench`;
  const repo = await coordinator.api("POST", "/repositories", {
    owner: "octo",
    name: "app",
    credentials_name: `pat-${tag}`,
    webhook_secret: webhookSecret,
  });
  const tenant = await (
    await fetch(`${fakeShimUrl}/_control/tenants`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ secret, callback_url: `${coordinator.url}/api/v1/providers/shim-${tag}/callbacks` }),
    })
  ).json();
  await coordinator.api("POST", "/providers", { name: `shim-${tag}`, url: tenant.url, secret, ...providerOver });
  return {
    world,
    repo,
    webhookSecret,
    tenant,
    provider: `shim-${tag}`,
    shimControl: `${fakeShimUrl}/_control/tenants/${tenant.id}`,
    endpoint: `fake-${tag}`,
    credentials: `pat-${tag}`,
  };
}

/**
 * Delivers a webhook to the coordinator as GitHub would: signed with the entity's secret, from
 * the fake GitHub's endpoint (its base_url host, https://github.example.test).
 */
export function deliverWebhook(coordinator, secret, payload, event = "workflow_job") {
  const body = JSON.stringify(payload);
  return fetch(`${coordinator.url}/webhooks/github`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": randomUUID(),
      "x-github-enterprise-host": "github.example.test",
      "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
    },
    body,
  });
}
