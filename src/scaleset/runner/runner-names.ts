const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** `<prefix>-<12 random characters>`: unique enough across scale sets and fits GitHub's 64-char limit. */
export function runnerName(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  let suffix = "";
  for (const b of bytes) suffix += ALPHABET[b % ALPHABET.length];
  return `${prefix}-${suffix}`;
}
