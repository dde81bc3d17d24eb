-- Retention (src/retention/, src/db/retention-store.ts): the figures of the last prune, one row,
-- and indexes so "the oldest N eligible rows" is an index range, not a table scan.
CREATE TABLE `retention_last_run` (
	`id` integer PRIMARY KEY NOT NULL,
	`started_at` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`deleted` text NOT NULL,
	`queries` integer NOT NULL,
	`complete` integer NOT NULL,
	`error` text
);
--> statement-breakpoint
DROP INDEX `instances_status_idx`;--> statement-breakpoint
CREATE INDEX `instances_status_changed_idx` ON `instances` (`status`,`status_changed_at`);--> statement-breakpoint
CREATE INDEX `jobs_status_updated_idx` ON `jobs` (`status`,`updated_at`);
