-- Received mail is listed and searched newest first in the order it was stored:
-- the receipts' rowid, which the search indexes share (decision 0014). A
-- mailbox's list walks this index backwards, mailbox then rowid, and stops at the
-- page; the index by received time and id it replaces is no longer read.
DROP INDEX receipts_by_mailbox;
CREATE INDEX receipts_by_mailbox_in_stored_order ON receipts (mailbox_id);
