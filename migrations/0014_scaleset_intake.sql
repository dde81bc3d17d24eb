ALTER TABLE `scale_sets` ADD `intake` text DEFAULT 'webhook' NOT NULL;
