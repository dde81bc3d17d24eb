import { notFound } from "./errors";

/**
 * The row a route acts on, or the 404 that names what is missing: the stores answer null for
 * "no such row", and every show, update and delete turns that into the same answer.
 */
export function requireFound<T>(row: T | null | undefined, what: string, id: string): T {
  if (row === null || row === undefined) throw notFound(what, id);
  return row;
}
