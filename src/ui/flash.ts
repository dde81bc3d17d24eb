/**
 * What an action's redirect tells the page it lands on (`?done=<key>`): the key travels in the
 * URL, the message is ours, so nothing from the query string is shown as text.
 */
const FLASH = {
  paused: "Scale set paused: it creates nothing and keeps cleaning up.",
  resumed: "Scale set resumed.",
  reconciled: "Reconciled.",
  reset: "Create backoff lifted.",
  spend_reset: "Spend guard lifted until 00:00 UTC.",
  deleting: "Instance sent to deletion.",
  force_deleting: "Instance sent to forced deletion (provider errors are ignored).",
  app_created: "GitHub App created; its key and secrets are sealed here. Next: install it.",
  installed: "Installation recorded, with credentials for it. Next: add what it covers.",
  synced: "Installations read from GitHub.",
  entities_added: "Added. Next: connect a cloud and create a scale set.",
  provider_added: "Provider registered.",
  scaleset_created: "Scale set created: paste its runs-on line into a workflow.",
} as const;

export type FlashKey = keyof typeof FLASH;

/** The message for a `done` query value; null for none or an unknown one. */
export const flashMessage = (done: string | undefined): string | null =>
  done && Object.hasOwn(FLASH, done) ? FLASH[done as FlashKey] : null;
