-- Refused writes (4xx) leave a short, throttled trace (src/audit/refusal.ts): the answer's
-- `{code, error}` instead of the request's body, and at most a few per actor a minute. The
-- partial index holds refused entries only, so the throttle's count ("this actor's refusals in
-- the last minute") is a range of at most a few index rows, however busy the actor otherwise is.
-- Entries already stored are left as they are: retention (AUDIT_RETENTION_DAYS) ages them out.
ALTER TABLE `audit_log` ADD `refusal` text;--> statement-breakpoint
CREATE INDEX `audit_log_refused_idx` ON `audit_log` (`actor`,`at`) WHERE status BETWEEN 400 AND 499;
