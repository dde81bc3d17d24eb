-- Issue 28: Gitea and Forgejo beside GitHub (docs/forges.md).
-- Which forge an endpoint is: github (github.com or GHES), gitea or forgejo.
ALTER TABLE `github_endpoints` ADD `forge` text DEFAULT 'github' NOT NULL;--> statement-breakpoint
-- The runner binary a Gitea or Forgejo scale set's machines download (null: the documented
-- default release), and its SHA-256, checked before it runs.
ALTER TABLE `scale_sets` ADD `runner_download_url` text;--> statement-breakpoint
ALTER TABLE `scale_sets` ADD `runner_download_sha256` text;--> statement-breakpoint
-- Forgejo: the handle of the waiting job an ephemeral runner was made for.
ALTER TABLE `instances` ADD `forge_job_handle` text;
