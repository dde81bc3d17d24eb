CREATE TABLE `github_cache` (
	`endpoint_name` text NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`fetched_at` integer NOT NULL,
	FOREIGN KEY (`endpoint_name`) REFERENCES `github_endpoints`(`name`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `github_cache_endpoint_key_idx` ON `github_cache` (`endpoint_name`,`key`);--> statement-breakpoint
CREATE TABLE `github_credential_state` (
	`credential_id` text PRIMARY KEY NOT NULL,
	`health` text DEFAULT 'ok' NOT NULL,
	`failure_reason` text,
	`failed_at` integer,
	`rate_limit_limit` integer,
	`rate_limit_remaining` integer,
	`rate_limit_used` integer,
	`rate_limit_reset_at` integer,
	`rate_limit_resource` text,
	`rate_limit_observed_at` integer,
	`blocked_until` integer,
	`rate_limit_strikes` integer DEFAULT 0 NOT NULL,
	`token_enc` text,
	`token_expires_at` integer,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`credential_id`) REFERENCES `github_credentials`(`id`) ON UPDATE no action ON DELETE cascade
);
