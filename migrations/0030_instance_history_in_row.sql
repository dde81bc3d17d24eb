-- Issue 39: an instance's lifecycle is written in its own row. Its transitions become a JSON
-- history in a column (the last 100, oldest first), appended by the same UPDATE that changes its
-- status: nine rows written a job fewer than a row per transition.
ALTER TABLE `instances` ADD `transitions` text DEFAULT '[]' NOT NULL;
--> statement-breakpoint
-- The newest 100, then oldest first (an aggregate takes its rows in its subquery's order).
UPDATE `instances` SET `transitions` = (
  SELECT json_group_array(json_object('at', `at`, 'field', `field`, 'from', `from_value`, 'to', `to_value`, 'reason', `reason`))
    FROM (SELECT * FROM (SELECT * FROM `instance_transitions` t WHERE t.`instance_id` = `instances`.`id` ORDER BY t.`id` DESC LIMIT 100) ORDER BY `id`)
) WHERE EXISTS (SELECT 1 FROM `instance_transitions` t WHERE t.`instance_id` = `instances`.`id`);
--> statement-breakpoint
DROP TABLE `instance_transitions`;
--> statement-breakpoint
-- A status change no longer rewrites an index: (scale_set_id, status, status_changed_at) was
-- written by every one of an instance's five. Live instances are those without a deletion time,
-- and the deleted ones (the spend guard's today, retention, the dashboard) are reached by it,
-- both through (scale_set_id, deleted_at), which only the move to `deleted` writes.
ALTER TABLE `instances` ADD `deleted_at` integer;
--> statement-breakpoint
UPDATE `instances` SET `deleted_at` = `status_changed_at` WHERE `status` = 'deleted';
--> statement-breakpoint
DROP INDEX `instances_scale_set_status_changed_idx`;
--> statement-breakpoint
CREATE INDEX `instances_scale_set_deleted_idx` ON `instances` (`scale_set_id`,`deleted_at`);
