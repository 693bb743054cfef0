-- Placeholder on branch w-kinds only: the number belongs to the publish workstream
-- (w-publish), whose 0011 migration replaces this file at merge. Delete this file then.
SELECT 1;
