-- A mailbox's mail (decision 0040): every table of mail that grows with the
-- mailbox, with the columns, keys, indexes and triggers D1 holds them with
-- today (migrations/ up to 0030), so a store's statements run unchanged on
-- either and a mailbox's rows move from D1 column for column.
-- `tests/native/mailbox_storage.rs` holds the two to each other.
--
-- One difference: a mailbox's database has no directory, so a column naming a
-- directory row (`mailbox_id` naming a mailbox) references nothing here; the
-- Worker decides from D1 that the mailbox exists before it asks the object.

-- Received messages: each receipt with its text, newest first in stored order.
CREATE TABLE receipts (
    id                     TEXT PRIMARY KEY,          -- rcp_…
    mailbox_id             TEXT NOT NULL,
    message_id             TEXT NOT NULL,             -- Message-ID without <>, or the key of one reusing another's
    envelope_from          TEXT NOT NULL,
    from_address           TEXT,
    from_name              TEXT,
    to_json                TEXT NOT NULL,             -- [{"address","name"}]
    cc_json                TEXT NOT NULL,
    recipients             TEXT NOT NULL,             -- to and cc, names and addresses, for search
    subject                TEXT NOT NULL,
    sent_at                INTEGER,                   -- the Date header
    received_at            INTEGER NOT NULL,
    in_reply_to_json       TEXT NOT NULL,             -- ["id", …]
    references_json        TEXT NOT NULL,
    size                   INTEGER NOT NULL,
    raw_key                TEXT NOT NULL,
    text_body              TEXT NOT NULL,
    text_source            TEXT NOT NULL CHECK (text_source IN ('text', 'html', 'none')),
    text_truncated         INTEGER NOT NULL,
    attachments_json       TEXT NOT NULL,             -- [{"index","name","content_type","size"}]
    reply_to_json          TEXT NOT NULL DEFAULT '[]',
    to_not_kept            INTEGER NOT NULL DEFAULT 0,
    cc_not_kept            INTEGER NOT NULL DEFAULT 0,
    attachments_not_listed INTEGER NOT NULL DEFAULT 0,
    thread_id              TEXT,
    sender_authentication  TEXT NOT NULL DEFAULT 'unverified'
        CHECK (sender_authentication IN ('authenticated', 'failed', 'unverified')),
    authentication_json    TEXT NOT NULL DEFAULT '{}',
    filed_by               TEXT,                      -- the butler that filed this copy
    content_digest         TEXT,
    claimed_message_id     TEXT,                      -- the Message-ID it reused
    UNIQUE (mailbox_id, message_id)
);
CREATE INDEX receipts_by_mailbox_in_stored_order ON receipts (mailbox_id);
CREATE INDEX receipts_by_raw_key ON receipts (raw_key);
CREATE INDEX receipts_by_thread ON receipts (thread_id);
CREATE INDEX receipts_by_claimed_message_id ON receipts (mailbox_id, claimed_message_id)
    WHERE claimed_message_id IS NOT NULL;

-- The search indexes over the receipts' headers and text (external content).
CREATE VIRTUAL TABLE receipt_headers_index USING fts5 (
    from_address, from_name, recipients, subject, mailbox_id,
    content = 'receipts', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE receipt_bodies_index USING fts5 (
    text_body, mailbox_id,
    content = 'receipts', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2'
);

-- Where a deleted receipt was in stored order, so a page after it continues.
CREATE TABLE deleted_receipts (
    id     TEXT PRIMARY KEY,                 -- rcp_…
    stored INTEGER NOT NULL
);

-- Conversations: their state, the Message-IDs that join them, who read them
-- how far, and their labels.
CREATE TABLE mail_threads (
    id                TEXT PRIMARY KEY,           -- thr_…
    mailbox_id        TEXT NOT NULL,
    subject           TEXT NOT NULL,              -- its first message's subject
    subject_key       TEXT NOT NULL,              -- the subject without reply prefixes, lower-cased
    status            TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'waiting', 'closed')),
    assignee          TEXT,                       -- usr_… or agt_…
    created_at        INTEGER NOT NULL,
    last_activity_at  INTEGER NOT NULL,           -- the latest message received or sent
    last_received_at  INTEGER,                    -- the latest message received: what makes it unread
    received_count    INTEGER NOT NULL DEFAULT 0,
    sent_count        INTEGER NOT NULL DEFAULT 0,
    latest_receipt_id TEXT                        -- the latest received message: its sender and snippet
);
CREATE INDEX mail_threads_by_activity ON mail_threads (mailbox_id, last_activity_at DESC, id DESC);
CREATE INDEX mail_threads_by_subject ON mail_threads (mailbox_id, subject_key);
CREATE TABLE mail_thread_message_ids (
    mailbox_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    thread_id  TEXT NOT NULL,
    PRIMARY KEY (mailbox_id, message_id)
) WITHOUT ROWID;
CREATE INDEX mail_thread_message_ids_by_thread ON mail_thread_message_ids (thread_id);
CREATE TABLE mail_thread_reads (
    thread_id  TEXT NOT NULL,
    reader     TEXT NOT NULL,                     -- usr_… or agt_…
    read_up_to INTEGER NOT NULL,
    PRIMARY KEY (thread_id, reader)
) WITHOUT ROWID;
CREATE TABLE thread_labels (
    thread_id TEXT NOT NULL REFERENCES mail_threads (id) ON DELETE CASCADE,
    label     TEXT NOT NULL,
    PRIMARY KEY (thread_id, label)
) WITHOUT ROWID;

-- Drafts and sends, each submitted version as its approver saw it, and their
-- attachments; a sealed send is never changed or deleted.
CREATE TABLE sends (
    id                    TEXT PRIMARY KEY,       -- snd_…
    mailbox_id            TEXT NOT NULL,
    author                TEXT NOT NULL,          -- usr_… or agt_…
    state                 TEXT NOT NULL
        CHECK (state IN ('draft', 'submitted', 'sealed', 'dispatched', 'failed', 'refused')),
    to_json               TEXT NOT NULL,
    cc_json               TEXT NOT NULL,
    subject               TEXT NOT NULL,
    text                  TEXT NOT NULL,
    reply_to              TEXT REFERENCES receipts (id),
    in_reply_to           TEXT,
    references_json       TEXT NOT NULL,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL,
    submitted_at          INTEGER,
    submitted_by          TEXT,
    decided_at            INTEGER,
    decided_by            TEXT,
    refusal_reason        TEXT,
    message_id            TEXT,
    manifest_hash         TEXT,
    sealed_at             INTEGER,
    dispatched_at         INTEGER,
    dispatch_error        TEXT,
    sealed_from_address   TEXT,
    sealed_from_name      TEXT,
    delivered_json        TEXT NOT NULL DEFAULT '[]',
    submitted_version     TEXT,
    thread_id             TEXT,
    sent_message_ids_json TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX sends_by_mailbox ON sends (mailbox_id, created_at DESC, id DESC);
CREATE INDEX sends_awaiting ON sends (state, submitted_at);
CREATE INDEX sends_by_thread ON sends (thread_id);
CREATE TRIGGER sends_sealed_are_never_deleted
BEFORE DELETE ON sends
WHEN OLD.state IN ('sealed', 'dispatched', 'failed')
BEGIN
    SELECT RAISE(ABORT, 'refused:sealed_send_is_immutable');
END;
CREATE TRIGGER sends_sealed_are_immutable
BEFORE UPDATE ON sends
WHEN OLD.state IN ('sealed', 'dispatched', 'failed') AND (
       NEW.id IS NOT OLD.id OR NEW.mailbox_id IS NOT OLD.mailbox_id OR NEW.author IS NOT OLD.author
    OR NEW.to_json IS NOT OLD.to_json OR NEW.cc_json IS NOT OLD.cc_json
    OR NEW.subject IS NOT OLD.subject OR NEW.text IS NOT OLD.text
    OR NEW.in_reply_to IS NOT OLD.in_reply_to OR NEW.references_json IS NOT OLD.references_json
    OR NEW.created_at IS NOT OLD.created_at OR NEW.submitted_at IS NOT OLD.submitted_at
    OR NEW.submitted_by IS NOT OLD.submitted_by OR NEW.submitted_version IS NOT OLD.submitted_version
    OR NEW.decided_at IS NOT OLD.decided_at OR NEW.decided_by IS NOT OLD.decided_by
    OR NEW.refusal_reason IS NOT OLD.refusal_reason
    OR NEW.message_id IS NOT OLD.message_id OR NEW.manifest_hash IS NOT OLD.manifest_hash
    OR NEW.sealed_at IS NOT OLD.sealed_at
    OR NEW.sealed_from_address IS NOT OLD.sealed_from_address
    OR NEW.sealed_from_name IS NOT OLD.sealed_from_name
    OR NEW.state NOT IN ('sealed', 'dispatched', 'failed'))
BEGIN
    SELECT RAISE(ABORT, 'refused:sealed_send_is_immutable');
END;
CREATE TABLE send_versions (
    send_id         TEXT NOT NULL,
    version         TEXT NOT NULL,               -- SHA-256 of submission_json's content
    submission_json TEXT NOT NULL,               -- what was submitted, as the approver sees it
    submitted_at    INTEGER NOT NULL,
    PRIMARY KEY (send_id, version)
);
CREATE TABLE send_attachments (
    send_id      TEXT NOT NULL REFERENCES sends (id),
    position     INTEGER NOT NULL,                -- from 0, in the order attached
    name         TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size         INTEGER NOT NULL,
    sha256       TEXT NOT NULL,
    PRIMARY KEY (send_id, position)
) WITHOUT ROWID;
CREATE TRIGGER send_attachments_change_only_on_drafts_insert
BEFORE INSERT ON send_attachments
WHEN (SELECT state FROM sends WHERE id = NEW.send_id) IS NOT 'draft'
BEGIN
    SELECT RAISE(ABORT, 'refused:send_attachments_only_on_drafts');
END;
CREATE TRIGGER send_attachments_change_only_on_drafts_update
BEFORE UPDATE ON send_attachments
WHEN (SELECT state FROM sends WHERE id = OLD.send_id) IS NOT 'draft'
BEGIN
    SELECT RAISE(ABORT, 'refused:send_attachments_only_on_drafts');
END;
CREATE TRIGGER send_attachments_change_only_on_drafts_delete
BEFORE DELETE ON send_attachments
WHEN (SELECT state FROM sends WHERE id = OLD.send_id) IS NOT 'draft'
BEGIN
    SELECT RAISE(ABORT, 'refused:send_attachments_only_on_drafts');
END;

-- What each butler did with each message it saw.
CREATE TABLE butler_runs (
    butler_id    TEXT NOT NULL,
    receipt_id   TEXT NOT NULL,
    version      INTEGER NOT NULL,
    at           INTEGER NOT NULL,
    matched      INTEGER NOT NULL,
    outcome_json TEXT NOT NULL,
    PRIMARY KEY (butler_id, receipt_id)
) WITHOUT ROWID;
