/**
 * Durations on the command line: `24h`, `90m`, `1d12h`, `3600s` or plain seconds (`3600`), so a
 * lifetime reads as people say it. The API takes whole seconds.
 */
import { UsageError } from "./errors.ts";

const UNIT_SECONDS: Record<string, number> = { d: 86_400, h: 3_600, m: 60, s: 1 };

/** Whole seconds from a duration; `option` names the flag in the error. */
export function parseDuration(text: string, option: string): number {
  const v = text.trim().toLowerCase();
  if (/^\d{1,10}$/.test(v)) return Number(v);
  const parts = [...v.matchAll(/(\d{1,10})([dhms])/g)];
  if (!parts.length || parts.map((p) => p[0]).join("") !== v) {
    throw new UsageError(`--${option}: a duration such as 24h, 90m, 1d12h or seconds, not "${text}"`);
  }
  return parts.reduce((sum, p) => sum + Number(p[1]) * UNIT_SECONDS[p[2]!]!, 0);
}
