ALTER TABLE `instances` ADD `registration_token_served_at` integer;--> statement-breakpoint
ALTER TABLE `scale_sets` ADD `jit_config_enabled` integer DEFAULT true NOT NULL;