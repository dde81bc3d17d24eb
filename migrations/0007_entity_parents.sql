ALTER TABLE `entities` ADD `use_parent_scale_sets` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `entities` ADD `enterprise` text;