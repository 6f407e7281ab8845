-- Where each mailbox's mail is read (decision 0040): NULL while it is in D1,
-- and from the time its move into the mailbox's own database was verified,
-- that time. Set once, in the batch that records the verification in the
-- organisation's chain, and never cleared: reads follow it, and from then on
-- what D1 still holds of the mailbox's mail is read by nothing.
ALTER TABLE mailboxes ADD COLUMN mail_moved_at INTEGER;
