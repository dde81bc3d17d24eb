/**
 * What an action's redirect tells the page it lands on (`?done=<key>`): the key travels in the
 * URL, the message is ours, so nothing from the query string is shown as text.
 */
const FLASH = {
  paused: "Scale set paused: it creates nothing and keeps cleaning up.",
  resumed: "Scale set resumed.",
  reconciled: "Reconciled.",
  reset: "Create backoff lifted.",
  deleting: "Instance sent to deletion.",
  force_deleting: "Instance sent to forced deletion (provider errors are ignored).",
} as const;

export type FlashKey = keyof typeof FLASH;

/** The message for a `done` query value; null for none or an unknown one. */
export const flashMessage = (done: string | undefined): string | null =>
  done && Object.hasOwn(FLASH, done) ? FLASH[done as FlashKey] : null;
