-- Snoozed conversations (decision 0048). A conversation snoozed until a moment
-- keeps its status and says when it wakes; the list leaves it out until then.
-- The same column is added to a mailbox's own database (mailbox migration
-- 0010), so the stores keep one SQL and the move copies it.
ALTER TABLE mail_threads ADD COLUMN snoozed_until INTEGER;

-- When each snoozed conversation wakes, kept in D1 whichever store holds its
-- mail: the minute's job reads the due ones here by time, and asks only their
-- mailboxes, never every mailbox's own database. A row is a promise to look,
-- not the truth: the job wakes a conversation only if its own row is still
-- snoozed until exactly this moment, so a row left behind (the conversation
-- woken early, snoozed again, deleted) wakes nothing and is forgotten.
CREATE TABLE thread_wakeups (
    thread_id  TEXT PRIMARY KEY,
    mailbox_id TEXT NOT NULL,
    wake_at    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX thread_wakeups_by_time ON thread_wakeups (wake_at);
