import type { RunnerSample } from "../../scaleset/runner/runner-sample";

/**
 * `scale_set_samples`: what a scale set's runners were doing every few minutes (the dashboard's
 * runners-by-state chart reads them in dashboard/dashboard-rows.ts; retention prunes them after 48 h).
 * A slot keeps its first sample: a second object incarnation writing the same slot changes nothing.
 */
export function sampleStatement(db: D1Database, scaleSetId: string, s: RunnerSample): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO scale_set_samples (scale_set_id, at, idle, busy, booting, other, min_idle) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(scale_set_id, at) DO NOTHING`,
    )
    .bind(scaleSetId, s.at, s.idle, s.busy, s.booting, s.other, s.minIdle);
}
