-- Issue 27: warm pools on a schedule, a lifetime watchdog, a spend guard, and queue time a team can see.
-- A scale set's min idle schedule: JSON array of {name, cron, timezone, min_idle_runners, prewarm}
-- (docs/scale-sets.md, "Schedules"); the latest entry that matched wins, its own min idle otherwise.
ALTER TABLE `scale_sets` ADD `schedules` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
-- Machines older than this are deleted unless their runner is on a job (0: never).
ALTER TABLE `scale_sets` ADD `max_runner_lifetime_seconds` integer DEFAULT 86400 NOT NULL;--> statement-breakpoint
-- A cap that applies even to a runner on its job (null: none).
ALTER TABLE `scale_sets` ADD `runner_lifetime_hard_cap_seconds` integer;--> statement-breakpoint
-- The spend guard: machine-hours a UTC day after which the scale set stops creating (null: none),
-- and when an admin last lifted it for the day.
ALTER TABLE `scale_sets` ADD `max_machine_hours_per_day` real;--> statement-breakpoint
ALTER TABLE `scale_sets` ADD `spend_reset_at` integer;--> statement-breakpoint
-- When the instance's runner first reported idle (create → online).
ALTER TABLE `instances` ADD `online_at` integer;--> statement-breakpoint
-- The spend guard sums a scale set's machine time today: its instances deleted since midnight
-- (UTC) are found by deletion time, not by reading every deleted one retention still keeps.
CREATE INDEX `instances_scale_set_status_changed_idx` ON `instances` (`scale_set_id`,`status`,`status_changed_at`);--> statement-breakpoint
-- Histograms kept in D1 so every isolate exports the same figures: one row per bucket, counts
-- not cumulative (the exporter adds them up); `sum` is the bucket's observations' total.
CREATE TABLE `metric_histograms` (
	`metric` text NOT NULL,
	`scale_set_id` text NOT NULL,
	`bucket` integer NOT NULL,
	`count` integer DEFAULT 0 NOT NULL,
	`sum` real DEFAULT 0 NOT NULL,
	PRIMARY KEY(`metric`, `scale_set_id`, `bucket`)
);
--> statement-breakpoint
-- What a scale set looked like every few minutes (the dashboard's runners-by-state chart).
CREATE TABLE `scale_set_samples` (
	`scale_set_id` text NOT NULL,
	`at` integer NOT NULL,
	`idle` integer DEFAULT 0 NOT NULL,
	`busy` integer DEFAULT 0 NOT NULL,
	`booting` integer DEFAULT 0 NOT NULL,
	`other` integer DEFAULT 0 NOT NULL,
	`min_idle` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`scale_set_id`, `at`)
);
