ALTER TABLE `github_credentials` ADD `bound_api_url` text;--> statement-breakpoint
-- Credentials stored so far are bound to where their endpoint points today.
UPDATE `github_credentials` SET `bound_api_url` = (
  SELECT rtrim(`github_endpoints`.`api_base_url`, '/') FROM `github_endpoints` WHERE `github_endpoints`.`name` = `github_credentials`.`endpoint_name`
);
