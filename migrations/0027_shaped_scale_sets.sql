-- Issue 38: job-shaped runners. A shaped scale set keeps its bounds (src/shapes/shape-bounds.ts),
-- each of its machines the shape and flavor it was made as, and a job it cannot serve says why.
ALTER TABLE `scale_sets` ADD `shape` text;
--> statement-breakpoint
ALTER TABLE `instances` ADD `shape` text;
--> statement-breakpoint
ALTER TABLE `jobs` ADD `refusal` text;
