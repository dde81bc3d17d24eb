-- github.com is always there; GHES endpoints are added through the API.
INSERT INTO `github_endpoints` (`name`, `description`, `base_url`, `api_base_url`, `upload_base_url`, `ca_cert_bundle`, `created_at`, `updated_at`)
VALUES ('github.com', 'github.com', 'https://github.com', 'https://api.github.com', 'https://uploads.github.com', NULL, CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER));
