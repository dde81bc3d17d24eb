CREATE TABLE `github_budget` (
	`credential_id` text PRIMARY KEY NOT NULL,
	`window_start` integer NOT NULL,
	`points_used` integer NOT NULL,
	`last_grant` integer NOT NULL,
	FOREIGN KEY (`credential_id`) REFERENCES `github_credentials`(`id`) ON UPDATE no action ON DELETE cascade
);
