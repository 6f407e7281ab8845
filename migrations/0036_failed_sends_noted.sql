-- Which sends in mailboxes' own databases failed, and whose they are
-- (decision 0040): the directory's note of each, so that a retry can ask, in
-- its first read and before the send is read, whether the send's author
-- still holds send.propose on its mailbox, and refuse the retry up front as
-- the guard in D1's own sealing transaction does for a send D1 holds.
--
-- An index, never an authority: written after the failure commits in the
-- mailbox's own database and removed once the send is dispatched, so it can
-- lag; what the send's own row says decides, and a send failed before this
-- note existed is still stopped at the seal (failed again, saying why).
CREATE TABLE sends_failed (
    send_id    TEXT PRIMARY KEY,
    mailbox_id TEXT NOT NULL,
    author     TEXT NOT NULL
);
