/** Where GitHub delivers webhooks to this coordinator: the one path, under PUBLIC_URL. */
export const WEBHOOK_PATH = "/webhooks/github";

/** The webhook URL for a PUBLIC_URL (trailing slashes dropped): what hooks and App manifests point at. */
export const webhookUrlFor = (publicUrl: string): string => `${publicUrl.trim().replace(/\/+$/, "")}${WEBHOOK_PATH}`;
