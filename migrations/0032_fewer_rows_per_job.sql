-- Issue 39: four rows written fewer per job, and fewer by an idle coordinator.
-- No index on webhook_deliveries.received_at. Each of a job's three deliveries wrote an entry in it
-- besides its row, only so retention could find the oldest delivery ids. Retention now walks the
-- table by its key (src/retention/key-walk.ts) and keeps where it stands here.
CREATE TABLE `retention_cursors` (
	`name` text PRIMARY KEY NOT NULL,
	`position` text DEFAULT '' NOT NULL,
	`lap_started_at` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
DROP INDEX `webhook_deliveries_received_idx`;
--> statement-breakpoint
-- A job's runner name, indexed only once it has one: a queued job's insert wrote an entry for its NULL.
-- Every lookup is `runner_name = …`, which implies NOT NULL, so SQLite still uses the index.
DROP INDEX `jobs_runner_name_idx`;
--> statement-breakpoint
CREATE INDEX `jobs_runner_name_idx` ON `jobs` (`runner_name`) WHERE `runner_name` IS NOT NULL;
--> statement-breakpoint
-- Usage by day and cause, a column per unit: a counters flush writes a row per cause it counted,
-- not one per unit and cause (an isolate with nothing to do wrote about 20 every 15 minutes).
-- WITHOUT ROWID: the key is the table, so a new day's row is one B-tree entry, not two.
CREATE TABLE `usage_days_new` (
	`day` text NOT NULL,
	`kind` text NOT NULL,
	`worker_requests` integer DEFAULT 0 NOT NULL,
	`do_requests` integer DEFAULT 0 NOT NULL,
	`do_active_ms` integer DEFAULT 0 NOT NULL,
	`d1_rows_read` integer DEFAULT 0 NOT NULL,
	`d1_rows_written` integer DEFAULT 0 NOT NULL,
	`do_rows_read` integer DEFAULT 0 NOT NULL,
	`do_rows_written` integer DEFAULT 0 NOT NULL,
	`subrequests` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`day`, `kind`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `usage_days_new` (`day`, `kind`, `worker_requests`, `do_requests`, `do_active_ms`, `d1_rows_read`, `d1_rows_written`, `do_rows_read`, `do_rows_written`, `subrequests`)
SELECT `day`, `kind`,
	SUM(CASE `unit` WHEN 'worker_requests' THEN `value` ELSE 0 END),
	SUM(CASE `unit` WHEN 'do_requests' THEN `value` ELSE 0 END),
	SUM(CASE `unit` WHEN 'do_active_ms' THEN `value` ELSE 0 END),
	SUM(CASE `unit` WHEN 'd1_rows_read' THEN `value` ELSE 0 END),
	SUM(CASE `unit` WHEN 'd1_rows_written' THEN `value` ELSE 0 END),
	SUM(CASE `unit` WHEN 'do_rows_read' THEN `value` ELSE 0 END),
	SUM(CASE `unit` WHEN 'do_rows_written' THEN `value` ELSE 0 END),
	SUM(CASE `unit` WHEN 'subrequests' THEN `value` ELSE 0 END)
FROM `usage_days` GROUP BY `day`, `kind`;
--> statement-breakpoint
DROP TABLE `usage_days`;
--> statement-breakpoint
ALTER TABLE `usage_days_new` RENAME TO `usage_days`;
