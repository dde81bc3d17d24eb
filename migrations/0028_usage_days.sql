-- Issue 39: what the coordinator spends in Cloudflare's billing units, by day, unit and cause
-- (src/db/metrics/usage-schema.ts).
CREATE TABLE `usage_days` (
	`day` text NOT NULL,
	`unit` text NOT NULL,
	`kind` text NOT NULL,
	`value` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`day`, `unit`, `kind`)
);
--> statement-breakpoint
-- (scale_set_id, status) is the start of instances_scale_set_status_changed_idx, which serves the
-- same lookups; every index is one more row written on each instance change (billed by D1).
DROP INDEX `instances_scale_set_status_idx`;
