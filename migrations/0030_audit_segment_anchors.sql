-- Each mailbox's segment of the audit chain lives in the mailbox's own
-- database (decision 0040); the organisation's chain anchors each segment's
-- head with an entry of its own (action 'anchor_mailbox_segment', object the
-- mailbox's id). This finds a mailbox's latest anchor at once.
CREATE INDEX audit_entries_segment_anchors ON audit_entries (object, seq)
    WHERE action = 'anchor_mailbox_segment';
