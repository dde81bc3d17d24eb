ALTER TABLE `instances` ADD `jit_on_boot` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `instances` ADD `jit_claimed_at` integer;--> statement-breakpoint
ALTER TABLE `instances` ADD `jit_asked_at` integer;--> statement-breakpoint
ALTER TABLE `scale_sets` ADD `jit_config_timing` text DEFAULT 'on_boot' NOT NULL;--> statement-breakpoint
-- A runner scale set's JIT comes from the scale set API's own endpoint, minted by its object.
UPDATE `scale_sets` SET `jit_config_timing` = 'before_create' WHERE `intake` = 'scaleset_api';
