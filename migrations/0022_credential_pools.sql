-- Issue 26: bursts at the speed of GitHub's limits.
-- Credential pools: an entity's other credentials (same endpoint) that share the minting of its
-- runners' JIT configs with its own `credentials_id` (docs/performance.md, "Credential pools").
CREATE TABLE `entity_credentials` (
	`entity_id` text NOT NULL,
	`credential_id` text NOT NULL,
	`added_at` integer NOT NULL,
	PRIMARY KEY(`entity_id`, `credential_id`),
	FOREIGN KEY (`entity_id`) REFERENCES `entities`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`credential_id`) REFERENCES `github_credentials`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `entity_credentials_credential_idx` ON `entity_credentials` (`credential_id`);--> statement-breakpoint
-- The credential that minted an instance's runner: its cleanup goes through it.
ALTER TABLE `instances` ADD `jit_credentials_id` text;--> statement-breakpoint
-- When the machine first asked for its runner (its boot time, create to first ask, leads creates).
ALTER TABLE `instances` ADD `booted_at` integer;--> statement-breakpoint
-- A scale set's boot time, set by hand (null: learned from its machines).
ALTER TABLE `scale_sets` ADD `boot_time_seconds` integer;--> statement-breakpoint
-- The budget a credential learned from GitHub's secondary-limit answers: points a minute, and
-- when it was last cut (it grows back from there).
ALTER TABLE `github_budget` ADD `learned_points_per_minute` integer;--> statement-breakpoint
ALTER TABLE `github_budget` ADD `learned_at` integer;
