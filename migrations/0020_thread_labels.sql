-- Labels on conversations (decision 0020): a team's own words for what a
-- conversation is about ("billing", "vip"), set by those who work the mailbox
-- or by a butler. Kept normalised (trimmed, whitespace collapsed, lower-cased
-- by the node before it writes), so the key is the comparison.
--
-- A conversation is never deleted today (its row outlives its messages, so a
-- late reply still finds it); should that change, its labels go with it.
-- Filtering a mailbox's list by a label walks the list's own index, newest
-- first, and asks this table's key of each conversation, as the status filter
-- asks the row: no index of its own, and no sort.
CREATE TABLE thread_labels (
    thread_id TEXT NOT NULL REFERENCES mail_threads (id) ON DELETE CASCADE,
    label     TEXT NOT NULL,
    PRIMARY KEY (thread_id, label)
) WITHOUT ROWID;
