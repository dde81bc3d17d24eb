/**
 * Runner labels are case-insensitive on GitHub, so a scale set stores them as a set:
 * trimmed, lower-cased, de-duplicated and sorted. Two scale sets with the same labels in
 * another order or case are then visibly the same.
 */
export function normalizeLabels(labels: readonly string[]): string[] {
  return [...new Set(labels.map((l) => l.trim().toLowerCase()).filter((l) => l.length > 0))].sort();
}
