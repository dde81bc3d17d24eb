import type { Forge } from "../db/github/schema";

/**
 * Whether an entity needs a webhook secret, by its endpoint's forge. GitHub and Gitea sign their
 * workflow_job deliveries with it, so it is required there; Forgejo sends no workflow_job
 * webhooks (its scale sets poll), so an entity on a Forgejo endpoint may leave it out.
 */

export const FORGEJO_NO_WEBHOOKS =
  "Forgejo sends no workflow_job webhooks: its scale sets poll for waiting jobs (intake poll), so a Forgejo entity needs no webhook";

/** The 400 detail when a create leaves the secret out where the forge signs deliveries with it; null when that is fine. */
export function missingWebhookSecretIssue(forge: Forge, sent: boolean): { path: string; message: string } | null {
  if (sent || forge === "forgejo") return null;
  const who = forge === "gitea" ? "Gitea" : "GitHub";
  return {
    path: "webhook_secret",
    message: `required on a ${forge} endpoint: ${who} signs each workflow_job delivery with it, and deliveries are checked against it (at least 8 characters; put the same secret in the webhook)`,
  };
}
