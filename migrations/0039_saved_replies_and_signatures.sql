-- Saved replies and signatures (decision 0045): settings of a mailbox and of a
-- person, kept in D1 beside the mailboxes and people they belong to, not in a
-- mailbox's own database, because they are not mail: they are read where a
-- draft is started and changed rarely, by the mailbox's people.
--
-- A saved reply's name is unique in its mailbox whatever its case, so two
-- people cannot save "Refund" and "refund" and the list stays readable.
CREATE TABLE saved_replies (
    id         TEXT PRIMARY KEY,
    mailbox_id TEXT NOT NULL REFERENCES mailboxes (id),
    name       TEXT NOT NULL COLLATE NOCASE,
    body       TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (mailbox_id, name)
);

-- One signature per mailbox and one per person: the owner's id says which
-- (its prefix is its kind), and a removed signature is a deleted row.
CREATE TABLE signatures (
    owner_id   TEXT PRIMARY KEY CHECK (owner_id LIKE 'mbx\_%' ESCAPE '\' OR owner_id LIKE 'usr\_%' ESCAPE '\'),
    text       TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;
