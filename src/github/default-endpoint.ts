/**
 * The endpoint every deployment has: github.com, put there by the first migration. It cannot be
 * deleted; credentials name it unless told otherwise, and a webhook delivery without
 * X-GitHub-Enterprise-Host comes from it.
 */
export const DEFAULT_ENDPOINT = "github.com";
