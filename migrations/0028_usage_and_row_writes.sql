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
--> statement-breakpoint
-- Rows written are D1's dearest unit (issue 39): a transition row without AUTOINCREMENT does not
-- also write sqlite_sequence. Ids stay increasing (the largest is never reused while the newest
-- row lives), and an instance's transitions are read in id order as before.
CREATE TABLE `instance_transitions_new` (
	`id` integer PRIMARY KEY NOT NULL,
	`instance_id` text NOT NULL,
	`at` integer NOT NULL,
	`field` text NOT NULL,
	`from_value` text,
	`to_value` text NOT NULL,
	`reason` text NOT NULL,
	FOREIGN KEY (`instance_id`) REFERENCES `instances`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `instance_transitions_new` SELECT `id`, `instance_id`, `at`, `field`, `from_value`, `to_value`, `reason` FROM `instance_transitions`;
--> statement-breakpoint
DROP TABLE `instance_transitions`;
--> statement-breakpoint
ALTER TABLE `instance_transitions_new` RENAME TO `instance_transitions`;
--> statement-breakpoint
CREATE INDEX `instance_transitions_instance_idx` ON `instance_transitions` (`instance_id`,`id`);
--> statement-breakpoint
-- A delivery's row keyed by its id alone (WITHOUT ROWID): one B-tree instead of a table and the
-- index of its TEXT primary key, so each delivery is two rows written, not three.
CREATE TABLE `webhook_deliveries_new` (
	`delivery_id` text PRIMARY KEY NOT NULL,
	`event` text NOT NULL,
	`action` text,
	`received_at` integer NOT NULL,
	`outcome` text NOT NULL,
	`job_id` integer
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `webhook_deliveries_new` SELECT `delivery_id`, `event`, `action`, `received_at`, `outcome`, `job_id` FROM `webhook_deliveries`;
--> statement-breakpoint
DROP TABLE `webhook_deliveries`;
--> statement-breakpoint
ALTER TABLE `webhook_deliveries_new` RENAME TO `webhook_deliveries`;
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_received_idx` ON `webhook_deliveries` (`received_at`);
--> statement-breakpoint
-- (status, id) served nothing (status, updated_at) does not: one row written less per job change.
DROP INDEX `jobs_status_idx`;
--> statement-breakpoint
-- No query looks an instance up by its job id (they go by job_seq, or count over a scale set's
-- rows): the index only cost a row written on every link and insert.
DROP INDEX `instances_job_idx`;
