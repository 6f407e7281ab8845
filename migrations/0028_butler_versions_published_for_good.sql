-- A published butler version is the record of what acted on deliveries, under
-- whose pinned authority and since when (decision 0023). Migration 0018 guarded
-- its rules and pins; whoever can write the database could still delete the
-- version, or move `published_at` to make it look published later or never, and
-- so rewrite which rules a delivery met. Nothing about a published version
-- changes, and it is never deleted; a draft is still edited and published.
DROP TRIGGER butler_versions_published_stay_as_published;

CREATE TRIGGER butler_versions_published_stay_as_published
BEFORE UPDATE ON butler_versions
WHEN OLD.published_at IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'refused:butler_version_published');
END;

CREATE TRIGGER butler_versions_published_are_kept
BEFORE DELETE ON butler_versions
WHEN OLD.published_at IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'refused:butler_version_published');
END;
