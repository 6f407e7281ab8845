-- Mail: mailboxes, received messages (one receipt per mailbox a message was
-- delivered to), their full-text indexes, and outbound sends under dual control.

CREATE TABLE mailboxes (
    id           TEXT PRIMARY KEY,             -- mbx_…
    address      TEXT NOT NULL UNIQUE,         -- lower-cased delivery address
    display_name TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);

-- A message as delivered to one mailbox. The raw bytes live in R2 under raw_key
-- (content-addressed, so a message delivered to two mailboxes is stored once).
CREATE TABLE receipts (
    id               TEXT PRIMARY KEY,         -- rcp_…
    mailbox_id       TEXT NOT NULL REFERENCES mailboxes (id),
    message_id       TEXT NOT NULL,            -- Message-ID without <>, or one derived from the bytes
    envelope_from    TEXT NOT NULL,
    from_address     TEXT,
    from_name        TEXT,
    to_json          TEXT NOT NULL,            -- [{"address","name"}]
    cc_json          TEXT NOT NULL,
    recipients       TEXT NOT NULL,            -- to and cc, names and addresses, for search
    subject          TEXT NOT NULL,
    sent_at          INTEGER,                  -- the Date header
    received_at      INTEGER NOT NULL,
    in_reply_to_json TEXT NOT NULL,            -- ["id", …]
    references_json  TEXT NOT NULL,
    size             INTEGER NOT NULL,
    raw_key          TEXT NOT NULL,
    text_body        TEXT NOT NULL,
    text_source      TEXT NOT NULL CHECK (text_source IN ('text', 'html', 'none')),
    text_truncated   INTEGER NOT NULL,
    attachments_json TEXT NOT NULL,            -- [{"index","name","content_type","size"}]
    UNIQUE (mailbox_id, message_id)
);
CREATE INDEX receipts_by_mailbox ON receipts (mailbox_id, received_at DESC, id DESC);

-- The two arms of search, indexing the receipts table in place. Headers are
-- searched where the caller reads metadata; bodies only where it reads content.
CREATE VIRTUAL TABLE receipt_headers_index USING fts5 (
    from_address, from_name, recipients, subject,
    content = 'receipts', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE receipt_bodies_index USING fts5 (
    text_body,
    content = 'receipts', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2'
);

-- Outbound mail. A draft becomes a submission, then a second person seals it
-- (immutable from then on) or refuses it.
CREATE TABLE sends (
    id               TEXT PRIMARY KEY,         -- snd_…
    mailbox_id       TEXT NOT NULL REFERENCES mailboxes (id),
    author           TEXT NOT NULL,            -- usr_… or agt_…
    state            TEXT NOT NULL CHECK (state IN ('draft', 'submitted', 'sealed', 'dispatched', 'failed', 'refused')),
    to_json          TEXT NOT NULL,
    cc_json          TEXT NOT NULL,
    subject          TEXT NOT NULL,
    text             TEXT NOT NULL,
    reply_to         TEXT REFERENCES receipts (id),
    in_reply_to      TEXT,
    references_json  TEXT NOT NULL,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    submitted_at     INTEGER,
    submitted_by     TEXT,
    decided_at       INTEGER,
    decided_by       TEXT,
    refusal_reason   TEXT,
    message_id       TEXT,
    manifest_hash    TEXT,
    sealed_at        INTEGER,
    dispatched_at    INTEGER,
    dispatch_error   TEXT
);
CREATE INDEX sends_by_mailbox ON sends (mailbox_id, created_at DESC, id DESC);
CREATE INDEX sends_awaiting ON sends (state, submitted_at);

-- Sealing cannot be undone: once sealed, what was approved never changes and the
-- row is never deleted. Only the dispatch outcome may still be recorded.
CREATE TRIGGER sends_sealed_are_immutable
BEFORE UPDATE ON sends
WHEN OLD.state IN ('sealed', 'dispatched', 'failed') AND (
       NEW.mailbox_id IS NOT OLD.mailbox_id OR NEW.author IS NOT OLD.author
    OR NEW.to_json IS NOT OLD.to_json OR NEW.cc_json IS NOT OLD.cc_json
    OR NEW.subject IS NOT OLD.subject OR NEW.text IS NOT OLD.text
    OR NEW.in_reply_to IS NOT OLD.in_reply_to OR NEW.references_json IS NOT OLD.references_json
    OR NEW.submitted_by IS NOT OLD.submitted_by OR NEW.decided_by IS NOT OLD.decided_by
    OR NEW.message_id IS NOT OLD.message_id OR NEW.manifest_hash IS NOT OLD.manifest_hash
    OR NEW.sealed_at IS NOT OLD.sealed_at
    OR NEW.state NOT IN ('sealed', 'dispatched', 'failed'))
BEGIN
    SELECT RAISE(ABORT, 'refused:sealed_send_is_immutable');
END;

CREATE TRIGGER sends_sealed_are_never_deleted
BEFORE DELETE ON sends
WHEN OLD.state IN ('sealed', 'dispatched', 'failed')
BEGIN
    SELECT RAISE(ABORT, 'refused:sealed_send_is_immutable');
END;

-- Write guards get one column per guard a call may register, each with its own
-- named CHECK, so a failed guard names itself ("write_guard_3") and the refusal
-- answered is that guard's own. Like before, the table never holds a row.
DROP TABLE write_guards;
CREATE TABLE write_guards (
    slot_1 INTEGER CONSTRAINT write_guard_1 CHECK (slot_1 IS NULL),
    slot_2 INTEGER CONSTRAINT write_guard_2 CHECK (slot_2 IS NULL),
    slot_3 INTEGER CONSTRAINT write_guard_3 CHECK (slot_3 IS NULL),
    slot_4 INTEGER CONSTRAINT write_guard_4 CHECK (slot_4 IS NULL),
    slot_5 INTEGER CONSTRAINT write_guard_5 CHECK (slot_5 IS NULL),
    slot_6 INTEGER CONSTRAINT write_guard_6 CHECK (slot_6 IS NULL),
    slot_7 INTEGER CONSTRAINT write_guard_7 CHECK (slot_7 IS NULL),
    slot_8 INTEGER CONSTRAINT write_guard_8 CHECK (slot_8 IS NULL)
);
