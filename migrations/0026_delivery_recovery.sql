-- Issue 36: GitHub never redelivers a failed webhook delivery, so the coordinator recovers them
-- (src/recovery/, docs/github.md "Lost deliveries").
-- Each hook (or backstop) the recovery object looks at, and how far it has looked.
CREATE TABLE `delivery_watches` (
	`key` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`endpoint_name` text NOT NULL,
	`entity_id` text,
	`app_id` integer,
	`hook_id` integer,
	`hook_checked_at` integer,
	`seen_through` integer,
	`walk_cursor` text,
	`walk_until` integer,
	`status` text DEFAULT 'ok' NOT NULL,
	`detail` text,
	`status_since` integer NOT NULL,
	`backstop_state` text,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `delivery_watches_entity_idx` ON `delivery_watches` (`entity_id`);--> statement-breakpoint
-- Every failed delivery seen (by GUID) and every job the backstop found, with what became of it.
CREATE TABLE `delivery_recoveries` (
	`key` text PRIMARY KEY NOT NULL,
	`watch_key` text NOT NULL,
	`entity_id` text,
	`means` text NOT NULL,
	`github_id` integer,
	`event` text,
	`action` text,
	`delivered_at` integer,
	`status_code` integer,
	`seen_at` integer NOT NULL,
	`outcome` text NOT NULL,
	`detail` text,
	`job_id` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `delivery_recoveries_seen_idx` ON `delivery_recoveries` (`seen_at`);--> statement-breakpoint
CREATE INDEX `delivery_recoveries_entity_idx` ON `delivery_recoveries` (`entity_id`,`seen_at`);--> statement-breakpoint
CREATE INDEX `delivery_recoveries_pending_idx` ON `delivery_recoveries` (`outcome`,`watch_key`);--> statement-breakpoint
-- The recovery object's last pass (one row).
CREATE TABLE `recovery_last_pass` (
	`id` integer PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`calls` integer NOT NULL,
	`watches` integer NOT NULL,
	`next_at` integer
);
