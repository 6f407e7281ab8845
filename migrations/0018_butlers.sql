-- Butlers (issue 15): an administrator's rules over a mailbox's inbound mail.
-- Editing writes a new version; publishing pins the sponsor's relations on the
-- mailbox as they stood then, and a published version's rules never change.
CREATE TABLE butlers (
  id TEXT PRIMARY KEY,            -- btl_ + ULID
  mailbox_id TEXT NOT NULL,
  name TEXT NOT NULL,
  sponsor_id TEXT NOT NULL,       -- a person, whose authority its effects run under
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  published_version INTEGER,      -- the version that acts, if any
  active INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX butlers_by_mailbox ON butlers (mailbox_id, name);

CREATE TABLE butler_versions (
  butler_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  rules_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  created_by TEXT NOT NULL,
  published_at INTEGER,
  published_by TEXT,
  pinned_relations_json TEXT,     -- the sponsor's relations on the mailbox when published
  PRIMARY KEY (butler_id, version)
) WITHOUT ROWID;

CREATE TRIGGER butler_versions_published_stay_as_published
BEFORE UPDATE OF rules_json, pinned_relations_json ON butler_versions
WHEN OLD.published_at IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'refused:butler_version_published');
END;

-- What each published butler did with each delivery: the conditions judged and
-- every effect run or skipped.
CREATE TABLE butler_runs (
  butler_id TEXT NOT NULL,
  receipt_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  at INTEGER NOT NULL,
  matched INTEGER NOT NULL,
  outcome_json TEXT NOT NULL,
  PRIMARY KEY (butler_id, receipt_id)
) WITHOUT ROWID;
