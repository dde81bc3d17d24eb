/**
 * The fields an update body carries, under their column names. A field left out of the body
 * keeps its stored value, so it is left out of the patch too; null is a value (it clears).
 * `columns` maps each plain field of the body to its column; fields that need work first (a
 * secret to seal, a value checked against others) stay out of it and are set by the caller.
 */
export function sentFields<Body extends object, const Columns extends { [K in keyof Body]?: string }>(
  body: Body,
  columns: Columns,
): { [K in keyof Columns & keyof Body as Columns[K] & string]?: Exclude<Body[K], undefined> } {
  const patch: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(columns) as [keyof Body & string, string][]) {
    if (body[field] !== undefined) patch[column] = body[field];
  }
  return patch as { [K in keyof Columns & keyof Body as Columns[K] & string]?: Exclude<Body[K], undefined> };
}
