ALTER TABLE `instances` ADD `runner_status_changed_at` integer;--> statement-breakpoint
ALTER TABLE `instances` ADD `jit_config_enc` text;