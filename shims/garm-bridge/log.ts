/**
 * One JSON object per event on stdout. Callers pass only fields they chose (never bodies,
 * the secret or an instance token); `redactor` is a second line of defence for text that
 * comes from a provider (its stdout and stderr may echo what it was given).
 */
export type Logger = (event: string, fields?: Record<string, unknown>) => void;

export function createLogger(sink: (line: string) => void = (line) => console.log(line)): Logger {
  return (event, fields = {}) => sink(JSON.stringify({ ts: new Date().toISOString(), event, ...fields }));
}

/** Replaces every occurrence of each secret (8+ characters) with `[redacted]`. */
export function redact(text: string, secrets: Iterable<string>): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 8) out = out.split(s).join("[redacted]");
  return out;
}
