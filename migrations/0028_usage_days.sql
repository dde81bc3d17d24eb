-- Issue 39: what the coordinator spends in Cloudflare's billing units, by day, unit and cause
-- (src/db/metrics/usage-schema.ts).
CREATE TABLE `usage_days` (
	`day` text NOT NULL,
	`unit` text NOT NULL,
	`kind` text NOT NULL,
	`value` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`day`, `unit`, `kind`)
);
