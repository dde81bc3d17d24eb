/** Where GitHub delivers webhooks to this coordinator: the one path, under PUBLIC_URL. */
export const WEBHOOK_PATH = "/webhooks/github";

/** The webhook URL for a PUBLIC_URL (trailing slashes dropped): what hooks and App manifests point at. */
export const webhookUrlFor = (publicUrl: string): string => `${publicUrl.trim().replace(/\/+$/, "")}${WEBHOOK_PATH}`;

/** Where Gitea delivers webhooks: a route of its own, so a delivery can only reach entities of its forge. */
export const GITEA_WEBHOOK_PATH = "/webhooks/gitea";

/** The Gitea webhook URL for a PUBLIC_URL. */
export const giteaWebhookUrlFor = (publicUrl: string): string => `${publicUrl.trim().replace(/\/+$/, "")}${GITEA_WEBHOOK_PATH}`;
