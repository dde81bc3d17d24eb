-- Issue 39: every index on a column a change sets is one more row written (D1 bills rows written).
-- An instance's status changes five times in its life, and (status, status_changed_at) was only
-- retention's way to deleted instances: it goes through each scale set's
-- instances_scale_set_status_changed_idx instead (src/db/retention-store.ts).
DROP INDEX `instances_status_changed_idx`;
--> statement-breakpoint
-- A transition keyed by (instance_id, id) in one B-tree (WITHOUT ROWID): one row written per
-- transition instead of the row and its (instance_id, id) index entry. Ids now grow within an
-- instance (src/db/instance-store.ts); the rows kept here keep theirs, which grew globally.
CREATE TABLE `instance_transitions_new` (
	`instance_id` text NOT NULL,
	`id` integer NOT NULL,
	`at` integer NOT NULL,
	`field` text NOT NULL,
	`from_value` text,
	`to_value` text NOT NULL,
	`reason` text NOT NULL,
	PRIMARY KEY(`instance_id`, `id`),
	FOREIGN KEY (`instance_id`) REFERENCES `instances`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `instance_transitions_new` SELECT `instance_id`, `id`, `at`, `field`, `from_value`, `to_value`, `reason` FROM `instance_transitions`;
--> statement-breakpoint
DROP TABLE `instance_transitions`;
--> statement-breakpoint
ALTER TABLE `instance_transitions_new` RENAME TO `instance_transitions`;
--> statement-breakpoint
-- Every change of every job wrote (status, updated_at) again. Retention walks the oldest jobs by
-- seq instead, and lookups by status go through (scale_set_id, status) (src/db/retention-store.ts,
-- src/db/dashboard-queries.ts).
DROP INDEX `jobs_status_updated_idx`;
