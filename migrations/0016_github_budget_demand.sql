-- Each scale set's last ask of its credential's GitHub budget, so that a pass can keep a fair share
-- of the window for the other scale sets on the credential that asked recently (github/budget.ts).
CREATE TABLE `github_budget_demand` (
	`scale_set_id` text PRIMARY KEY NOT NULL,
	`credential_id` text NOT NULL,
	`window_start` integer NOT NULL,
	`wanted` integer NOT NULL,
	`granted` integer NOT NULL,
	`granted_in_window` integer NOT NULL,
	FOREIGN KEY (`scale_set_id`) REFERENCES `scale_sets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`credential_id`) REFERENCES `github_credentials`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `github_budget_demand_credential_idx` ON `github_budget_demand` (`credential_id`, `window_start`);
