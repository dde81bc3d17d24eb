/** Small display helpers for the dashboard (pure). */

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

export const when = (ms: number | null | undefined): string =>
  ms === null || ms === undefined ? "—" : new Date(ms).toISOString().replace("T", " ").slice(0, 19) + "Z";

/** At most `max` characters, with an ellipsis when cut: names from webhooks can be long. */
export const clip = (text: string, max = 120): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A job's labels for a table cell: the first few, clipped, and how many more there are. */
export function labelList(labels: readonly string[], shown = 5): string {
  const head = labels
    .slice(0, shown)
    .map((l) => clip(l, 40))
    .join(", ");
  return labels.length > shown ? `${head} + ${labels.length - shown} more` : head;
}
