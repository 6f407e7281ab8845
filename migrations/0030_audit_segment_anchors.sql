-- Each mailbox's segment of the audit chain lives in the mailbox's own
-- database (decision 0040); the organisation's chain anchors each segment's
-- head with an entry of its own (action 'anchor_mailbox_segment', object the
-- mailbox's id). This finds a mailbox's latest anchor at once.
CREATE INDEX audit_entries_segment_anchors ON audit_entries (object, seq)
    WHERE action = 'anchor_mailbox_segment';

-- When the upkeep last checked each mailbox's segment: a run checks the few
-- checked longest ago (a mailbox's object is a subrequest, and an invocation
-- has few), so every segment has its turn however many mailboxes there are.
CREATE TABLE audit_segment_checks (
    mailbox_id TEXT PRIMARY KEY REFERENCES mailboxes (id),
    checked_at INTEGER NOT NULL
) WITHOUT ROWID;
