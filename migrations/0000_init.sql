CREATE TABLE `entities` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`owner` text NOT NULL,
	`name` text DEFAULT '' NOT NULL,
	`lookup_key` text NOT NULL,
	`endpoint_name` text NOT NULL,
	`credentials_id` text NOT NULL,
	`webhook_secret_enc` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`endpoint_name`) REFERENCES `github_endpoints`(`name`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`credentials_id`) REFERENCES `github_credentials`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `entities_endpoint_lookup_idx` ON `entities` (`endpoint_name`,`lookup_key`);--> statement-breakpoint
CREATE INDEX `entities_lookup_idx` ON `entities` (`lookup_key`);--> statement-breakpoint
CREATE INDEX `entities_credentials_idx` ON `entities` (`credentials_id`);--> statement-breakpoint
CREATE TABLE `github_credentials` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`endpoint_name` text NOT NULL,
	`auth_type` text NOT NULL,
	`app_id` integer,
	`installation_id` integer,
	`secret_enc` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`endpoint_name`) REFERENCES `github_endpoints`(`name`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `github_credentials_name_unique` ON `github_credentials` (`name`);--> statement-breakpoint
CREATE INDEX `github_credentials_endpoint_idx` ON `github_credentials` (`endpoint_name`);--> statement-breakpoint
CREATE TABLE `github_endpoints` (
	`name` text PRIMARY KEY NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`base_url` text NOT NULL,
	`api_base_url` text NOT NULL,
	`upload_base_url` text DEFAULT '' NOT NULL,
	`ca_cert_bundle` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `instance_transitions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`instance_id` text NOT NULL,
	`at` integer NOT NULL,
	`field` text NOT NULL,
	`from_value` text,
	`to_value` text NOT NULL,
	`reason` text NOT NULL,
	FOREIGN KEY (`instance_id`) REFERENCES `instances`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `instance_transitions_instance_idx` ON `instance_transitions` (`instance_id`,`id`);--> statement-breakpoint
CREATE TABLE `instances` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`scale_set_id` text NOT NULL,
	`provider_id` text,
	`status` text NOT NULL,
	`runner_status` text NOT NULL,
	`agent_id` integer,
	`addresses` text NOT NULL,
	`os_type` text,
	`os_name` text,
	`os_version` text,
	`os_arch` text,
	`create_attempt` integer DEFAULT 1 NOT NULL,
	`status_message` text,
	`provider_fault` text,
	`job_id` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`status_changed_at` integer NOT NULL,
	FOREIGN KEY (`scale_set_id`) REFERENCES `scale_sets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `instances_name_unique` ON `instances` (`name`);--> statement-breakpoint
CREATE INDEX `instances_scale_set_status_idx` ON `instances` (`scale_set_id`,`status`);--> statement-breakpoint
CREATE INDEX `instances_status_idx` ON `instances` (`status`);--> statement-breakpoint
CREATE INDEX `instances_job_idx` ON `instances` (`job_id`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` integer PRIMARY KEY NOT NULL,
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
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`entity_id`) REFERENCES `entities`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`scale_set_id`) REFERENCES `scale_sets`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `jobs_scale_set_status_idx` ON `jobs` (`scale_set_id`,`status`);--> statement-breakpoint
CREATE INDEX `jobs_status_idx` ON `jobs` (`status`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_runner_name_idx` ON `jobs` (`runner_name`);--> statement-breakpoint
CREATE TABLE `providers` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`url` text NOT NULL,
	`secret_enc` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `providers_name_unique` ON `providers` (`name`);--> statement-breakpoint
CREATE TABLE `scale_sets` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`entity_id` text NOT NULL,
	`provider_id` text NOT NULL,
	`labels` text NOT NULL,
	`min_idle_runners` integer DEFAULT 0 NOT NULL,
	`max_runners` integer NOT NULL,
	`image` text NOT NULL,
	`flavor` text NOT NULL,
	`os_type` text DEFAULT 'linux' NOT NULL,
	`os_arch` text DEFAULT 'amd64' NOT NULL,
	`bootstrap_timeout` integer DEFAULT 20 NOT NULL,
	`runner_prefix` text DEFAULT 'edgerunner' NOT NULL,
	`runner_group` text DEFAULT '' NOT NULL,
	`extra_specs` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`priority` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`entity_id`) REFERENCES `entities`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`provider_id`) REFERENCES `providers`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `scale_sets_entity_name_idx` ON `scale_sets` (`entity_id`,`name`);--> statement-breakpoint
CREATE INDEX `scale_sets_provider_idx` ON `scale_sets` (`provider_id`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`delivery_id` text PRIMARY KEY NOT NULL,
	`event` text NOT NULL,
	`action` text,
	`received_at` integer NOT NULL,
	`outcome` text NOT NULL,
	`job_id` integer
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_received_idx` ON `webhook_deliveries` (`received_at`);