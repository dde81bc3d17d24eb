-- A job row belongs to the entity whose delivery first brought it, for good (docs/security.md):
-- jobs are keyed by (entity, source, GitHub's id), not by GitHub's id alone, so a delivery signed
-- by one entity can neither advance nor pre-claim another entity's job. `seq` is the row's own
-- id; `source` keeps the scale set API's runner request ids apart from REST job ids.
-- SQLite cannot change a primary key in place: the table is rebuilt, rows kept.
CREATE TABLE `jobs_new` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
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
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`entity_id`) REFERENCES `entities`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`scale_set_id`) REFERENCES `scale_sets`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
-- Rows a runner scale set's queue wrote carry runner request ids: their deliveries say so, and
-- (once those are pruned) their scale set's intake does.
INSERT INTO `jobs_new` (`source`, `id`, `run_id`, `run_attempt`, `name`, `workflow_name`, `repository`, `owner`, `labels`,
	`status`, `conclusion`, `runner_name`, `runner_id`, `entity_id`, `scale_set_id`, `queued_at`, `started_at`, `completed_at`,
	`created_at`, `updated_at`)
SELECT
	CASE WHEN EXISTS (SELECT 1 FROM `webhook_deliveries` d WHERE d.`job_id` = j.`id` AND d.`event` = 'scaleset_message')
		OR EXISTS (SELECT 1 FROM `scale_sets` s WHERE s.`id` = j.`scale_set_id` AND s.`intake` = 'scaleset_api')
		THEN 'scaleset_api' ELSE 'webhook' END,
	j.`id`, j.`run_id`, j.`run_attempt`, j.`name`, j.`workflow_name`, j.`repository`, j.`owner`, j.`labels`,
	j.`status`, j.`conclusion`, j.`runner_name`, j.`runner_id`, j.`entity_id`, j.`scale_set_id`, j.`queued_at`, j.`started_at`,
	j.`completed_at`, j.`created_at`, j.`updated_at`
FROM `jobs` j ORDER BY j.`id`;
--> statement-breakpoint
DROP TABLE `jobs`;
--> statement-breakpoint
ALTER TABLE `jobs_new` RENAME TO `jobs`;
--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_entity_source_id_idx` ON `jobs` (`entity_id`,`source`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_scale_set_status_idx` ON `jobs` (`scale_set_id`,`status`);--> statement-breakpoint
CREATE INDEX `jobs_status_idx` ON `jobs` (`status`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_runner_name_idx` ON `jobs` (`runner_name`);--> statement-breakpoint
CREATE INDEX `jobs_status_updated_idx` ON `jobs` (`status`,`updated_at`);--> statement-breakpoint
CREATE INDEX `jobs_id_idx` ON `jobs` (`id`);--> statement-breakpoint
-- An instance is linked to one job row (the one whose delivery could reach its scale set).
ALTER TABLE `instances` ADD `job_seq` integer;--> statement-breakpoint
UPDATE `instances` SET `job_seq` = (SELECT j.`seq` FROM `jobs` j WHERE j.`id` = `instances`.`job_id`) WHERE `job_id` IS NOT NULL;--> statement-breakpoint
CREATE INDEX `instances_job_seq_idx` ON `instances` (`job_seq`);
