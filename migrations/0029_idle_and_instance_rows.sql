-- Issue 39: every index on a column a change sets is one more row written (D1 bills rows written).
-- An instance's status changes five times in its life, and (status, status_changed_at) was only
-- retention's way to deleted instances: it goes through each scale set's
-- instances_scale_set_status_changed_idx instead (src/db/retention-store.ts).
DROP INDEX `instances_status_changed_idx`;
