-- Which sends await a decision, and whose they are (decision 0040): the
-- directory's own note of each submission, kept on D1 whatever database the
-- send itself is in, so that a decision can ask, in its first read and
-- before the send is read, whether the send's author still holds
-- send.propose on its mailbox, and (next) so that the approval queue can
-- find the sends awaiting a caller across every mailbox without asking each.
--
-- An index, never an authority: written with the change it follows (in its
-- transaction on D1, after it commits in a mailbox's own database), so it
-- can lag; what the send's own row says decides.
CREATE TABLE sends_awaiting_decision (
    send_id      TEXT PRIMARY KEY,
    mailbox_id   TEXT NOT NULL,
    author       TEXT NOT NULL,
    submitted_by TEXT NOT NULL,
    submitted_at INTEGER NOT NULL
);
CREATE INDEX sends_awaiting_decision_by_mailbox ON sends_awaiting_decision (mailbox_id, submitted_at, send_id);

INSERT INTO sends_awaiting_decision (send_id, mailbox_id, author, submitted_by, submitted_at)
  SELECT id, mailbox_id, author, submitted_by, submitted_at FROM sends
   WHERE state = 'submitted' AND submitted_by IS NOT NULL AND submitted_at IS NOT NULL;
