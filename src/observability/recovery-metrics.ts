import type { MetricsData } from "../db/metrics/metrics-store";
import type { Exposition } from "./prometheus";

/**
 * Delivery recovery on /metrics (src/recovery/): deliveries recovered by the kind of hook and the
 * means, jobs the backstop found by entity kind (counters kept in D1 by whoever flushed them), each
 * watch's state (1 while its last look went fine), and when the last pass ran.
 */

const P = "edgerunner_";

/** Counter names: `recovery.recovered|<hook kind>|<means>` and `recovery.backstop_found|<entity kind>`. */
export const RECOVERED_COUNTER = "recovery.recovered";
export const BACKSTOP_FOUND_COUNTER = "recovery.backstop_found";

export function addRecoveryMetrics(m: Exposition, data: Pick<MetricsData, "counters" | "recoveryWatches" | "recoveryLastPass">): void {
  const recovered = `${P}deliveries_recovered_total`;
  const recoveredHelp =
    "Webhook deliveries GitHub recorded as failed that the coordinator took in afterwards, by the kind of hook (repository, organization, app) and how (ingest: the payload fetched back from GitHub)";
  const found = `${P}backstop_jobs_found_total`;
  const foundHelp = "Jobs the backstop found at the forge that no delivery had brought, by the kind of entity it looked for";
  m.declare(recovered, recoveredHelp, "counter");
  m.declare(found, foundHelp, "counter");
  for (const c of data.counters) {
    const [family, a = "", b = ""] = c.name.split("|");
    if (family === RECOVERED_COUNTER) m.add(recovered, recoveredHelp, "counter", { hook_kind: a, means: b }, c.value);
    else if (family === BACKSTOP_FOUND_COUNTER) m.add(found, foundHelp, "counter", { entity_kind: a }, c.value);
  }

  const watch = `${P}delivery_watch_ok`;
  const watchHelp =
    "1 while delivery recovery's last look at a hook (or the backstop's at an entity's jobs) went fine, 0 while it failed (status says why: forbidden, not_found, no_hook, rate_limited, …)";
  m.declare(watch, watchHelp, "gauge");
  for (const w of data.recoveryWatches) {
    m.add(
      watch,
      watchHelp,
      "gauge",
      { watch: w.key, kind: w.kind, entity_id: w.entity_id ?? "", status: w.status },
      w.status === "ok" ? 1 : 0,
    );
  }
  if (data.recoveryLastPass) {
    const p = data.recoveryLastPass;
    m.add(
      `${P}delivery_recovery_last_pass_timestamp_seconds`,
      "When delivery recovery's last pass ran, unix seconds",
      "gauge",
      {},
      Math.floor(p.at / 1000),
    );
    m.add(`${P}delivery_recovery_last_pass_github_calls`, "GitHub calls delivery recovery's last pass made", "gauge", {}, p.calls);
  }
}
