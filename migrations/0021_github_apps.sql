-- GitHub Apps made on the first-run page through GitHub's App manifest flow (src/setup/), where
-- they are installed, and the manifest round trips in flight (docs/first-run.md).
CREATE TABLE `github_apps` (
	`id` text PRIMARY KEY NOT NULL,
	`endpoint_name` text NOT NULL,
	`app_id` integer NOT NULL,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`owner_login` text NOT NULL,
	`html_url` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret_enc` text NOT NULL,
	`private_key_enc` text NOT NULL,
	`webhook_secret_enc` text NOT NULL,
	`permissions` text NOT NULL,
	`events` text NOT NULL,
	`bound_api_url` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`endpoint_name`) REFERENCES `github_endpoints`(`name`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `github_apps_endpoint_app_idx` ON `github_apps` (`endpoint_name`,`app_id`);--> statement-breakpoint
CREATE TABLE `github_app_installations` (
	`app_row_id` text NOT NULL,
	`installation_id` integer NOT NULL,
	`account_login` text NOT NULL,
	`account_type` text NOT NULL,
	`repository_selection` text NOT NULL,
	`repositories` text NOT NULL,
	`credentials_id` text,
	`status` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`app_row_id`) REFERENCES `github_apps`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`credentials_id`) REFERENCES `github_credentials`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `github_app_installations_pk` ON `github_app_installations` (`app_row_id`,`installation_id`);--> statement-breakpoint
CREATE TABLE `github_app_manifests` (
	`state_hash` text PRIMARY KEY NOT NULL,
	`session_hash` text NOT NULL,
	`endpoint_name` text NOT NULL,
	`manifest` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`claimed_at` integer,
	`app_row_id` text,
	FOREIGN KEY (`app_row_id`) REFERENCES `github_apps`(`id`) ON UPDATE no action ON DELETE set null
);
