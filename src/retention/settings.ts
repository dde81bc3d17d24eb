/**
 * Retention settings from the Worker's vars (docs/retention.md). Pure: a bad value never stops
 * a run; it falls back (to the default, or to the nearest bound) and says so in `warnings`,
 * which the caller logs.
 */

export interface RetentionSettings {
  /** Completed jobs and deleted instances (with their transitions) are kept this many days. */
  retentionDays: number;
  /** Webhook delivery ids (the duplicate check) are kept this many days. */
  deliveryRetentionDays: number;
  /** Audit trail entries (docs/operations.md) are kept this many days. */
  auditRetentionDays: number;
  /** Most D1 queries one run may spend, the write of its figures included. */
  maxQueries: number;
  /** Most rows one DELETE removes. */
  batchSize: number;
}

export type RetentionVar =
  | "RETENTION_DAYS"
  | "DELIVERY_RETENTION_DAYS"
  | "AUDIT_RETENTION_DAYS"
  | "RETENTION_MAX_QUERIES"
  | "RETENTION_BATCH_SIZE";

interface Knob {
  key: keyof RetentionSettings;
  default: number;
  min: number;
  max: number;
}

/**
 * D1 allows 1,000 queries per Worker invocation (Workers Paid; 50 on Free). The cap stays well
 * under it by default and can never reach it. 14 days of delivery ids is twice the longest
 * window in which GitHub lets anyone redeliver a delivery (7 days on GHES, 3 on github.com).
 * The audit trail is kept a year by default: who changed what is asked long after the jobs are gone.
 */
export const RETENTION_KNOBS: Record<RetentionVar, Knob> = {
  RETENTION_DAYS: { key: "retentionDays", default: 30, min: 1, max: 3650 },
  DELIVERY_RETENTION_DAYS: { key: "deliveryRetentionDays", default: 14, min: 1, max: 3650 },
  AUDIT_RETENTION_DAYS: { key: "auditRetentionDays", default: 365, min: 1, max: 3650 },
  RETENTION_MAX_QUERIES: { key: "maxQueries", default: 100, min: 3, max: 900 },
  RETENTION_BATCH_SIZE: { key: "batchSize", default: 500, min: 1, max: 5000 },
};

export interface SettingWarning {
  name: RetentionVar;
  value: string;
  used: number;
  reason: string;
}

export function readRetentionSettings(vars: Partial<Record<RetentionVar, string | undefined>>): {
  settings: RetentionSettings;
  warnings: SettingWarning[];
} {
  const settings = {} as RetentionSettings;
  const warnings: SettingWarning[] = [];
  for (const [name, knob] of Object.entries(RETENTION_KNOBS) as [RetentionVar, Knob][]) {
    const raw = vars[name];
    settings[knob.key] = knob.default;
    if (raw === undefined || raw.trim() === "") continue;
    const text = raw.trim();
    if (!/^\d+$/.test(text) || Number(text) < 1) {
      warnings.push({ name, value: raw, used: knob.default, reason: "not a positive whole number; using the default" });
      continue;
    }
    const n = Number(text);
    if (n < knob.min) {
      warnings.push({ name, value: raw, used: knob.min, reason: `below the minimum ${knob.min}; using the minimum` });
      settings[knob.key] = knob.min;
    } else if (n > knob.max) {
      warnings.push({ name, value: raw, used: knob.max, reason: `above the maximum ${knob.max}; using the maximum` });
      settings[knob.key] = knob.max;
    } else settings[knob.key] = n;
  }
  return { settings, warnings };
}

const DAY_MS = 86_400_000;

/**
 * The runners-by-state samples are kept this long, not a setting: the dashboard draws the last
 * 24 hours, and a day more lets a look at "yesterday" survive a retention run.
 */
export const SAMPLE_RETENTION_MS = 2 * DAY_MS;

/** Rows older than these times (unix ms) may go, if nothing live needs them. */
export interface Cutoffs {
  deliveries: number;
  history: number;
  audit: number;
  samples: number;
}

export function retentionCutoffs(now: number, s: RetentionSettings): Cutoffs {
  return {
    deliveries: now - s.deliveryRetentionDays * DAY_MS,
    history: now - s.retentionDays * DAY_MS,
    audit: now - s.auditRetentionDays * DAY_MS,
    samples: now - SAMPLE_RETENTION_MS,
  };
}
