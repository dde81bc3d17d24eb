import { describe, expect, it } from "vitest";
import { missingWebhookSecretIssue } from "../../../src/forges/entity-webhook-secret";

describe("an entity's webhook secret, by forge", () => {
  it("is required where the forge signs workflow_job deliveries with it, saying why", () => {
    expect(missingWebhookSecretIssue("github", false)).toMatchObject({
      path: "webhook_secret",
      message: expect.stringMatching(/GitHub signs/),
    });
    expect(missingWebhookSecretIssue("gitea", false)).toMatchObject({
      path: "webhook_secret",
      message: expect.stringMatching(/Gitea signs/),
    });
  });

  it("may be left out on Forgejo, which sends no workflow_job webhooks; sent, it is fine everywhere", () => {
    expect(missingWebhookSecretIssue("forgejo", false)).toBeNull();
    for (const forge of ["github", "gitea", "forgejo"] as const) expect(missingWebhookSecretIssue(forge, true)).toBeNull();
  });
});
