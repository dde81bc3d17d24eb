-- Issue 39: a job's row without AUTOINCREMENT. Every insert and every upsert into an AUTOINCREMENT
-- table writes sqlite_sequence too, conflict or not: a row written by each of a job's three
-- deliveries. A plain INTEGER PRIMARY KEY takes the largest seq + 1, so a seq is never reused as
-- long as the newest row is never deleted: retention keeps it (src/db/retention/retention-store.ts).
CREATE TABLE `jobs_new` (
	`seq` integer PRIMARY KEY NOT NULL,
	`source` text DEFAULT 'webhook' NOT NULL,
	`id` integer NOT NULL,
	`run_id` integer NOT NULL,
	`run_attempt` integer DEFAULT 1 NOT NULL,
	`name` text DEFAULT '' NOT NULL,
	`workflow_name` text,
	`repository` text NOT NULL,
	`owner` text NOT NULL,
	`labels` text NOT NULL,
	`status` text NOT NULL,
	`conclusion` text,
	`runner_name` text,
	`runner_id` integer,
	`entity_id` text,
	`scale_set_id` text,
	`queued_at` integer,
	`started_at` integer,
	`completed_at` integer,
	`problem` text,
	`refusal` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`entity_id`) REFERENCES `entities`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`scale_set_id`) REFERENCES `scale_sets`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
INSERT INTO `jobs_new` (`seq`, `source`, `id`, `run_id`, `run_attempt`, `name`, `workflow_name`, `repository`, `owner`, `labels`,
  `status`, `conclusion`, `runner_name`, `runner_id`, `entity_id`, `scale_set_id`, `queued_at`, `started_at`, `completed_at`,
  `problem`, `refusal`, `created_at`, `updated_at`)
SELECT `seq`, `source`, `id`, `run_id`, `run_attempt`, `name`, `workflow_name`, `repository`, `owner`, `labels`,
  `status`, `conclusion`, `runner_name`, `runner_id`, `entity_id`, `scale_set_id`, `queued_at`, `started_at`, `completed_at`,
  `problem`, `refusal`, `created_at`, `updated_at` FROM `jobs`;
--> statement-breakpoint
DROP TABLE `jobs`;
--> statement-breakpoint
ALTER TABLE `jobs_new` RENAME TO `jobs`;
--> statement-breakpoint
DELETE FROM `sqlite_sequence` WHERE `name` = 'jobs';
--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_entity_source_id_idx` ON `jobs` (`entity_id`,`source`,`id`);
--> statement-breakpoint
CREATE INDEX `jobs_scale_set_status_idx` ON `jobs` (`scale_set_id`,`status`);
--> statement-breakpoint
CREATE INDEX `jobs_runner_name_idx` ON `jobs` (`runner_name`);
--> statement-breakpoint
CREATE INDEX `jobs_id_idx` ON `jobs` (`id`);
--> statement-breakpoint
-- Each instance insert and each runner's link to its job wrote an entry here; retention, its one
-- reader, reads the live instances' jobs once through each scale set's index instead.
DROP INDEX `instances_job_seq_idx`;
