/** Single-quotes a value for bash, so nothing in it is ever interpreted. */
export const shellQuote = (v: string) => `'${v.replaceAll("'", `'"'"'`)}'`;

/**
 * Single-quotes a value for PowerShell. PowerShell also ends a single-quoted string at the
 * typographic single quotes (U+2018..U+201B), so every one of them is doubled too.
 */
export const psQuote = (v: string) => `'${v.replace(/['\u2018\u2019\u201A\u201B]/g, "$&$&")}'`;

/** A value safe to put in a script comment: one line, printable. */
export const commentSafe = (v: string) => v.replace(/[^\x20-\x7E]/g, "?");
