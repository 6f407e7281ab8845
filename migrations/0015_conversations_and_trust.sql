-- A shared inbox (issue 14, decision 0020): received and sent mail grouped into
-- conversations (threads) per mailbox, the working state people keep on each, and
-- how far each received message's sender was authenticated.

CREATE TABLE mail_threads (
    id                TEXT PRIMARY KEY,           -- thr_…
    mailbox_id        TEXT NOT NULL REFERENCES mailboxes (id),
    subject           TEXT NOT NULL,              -- its first message's subject
    subject_key       TEXT NOT NULL,              -- the subject without reply prefixes, lower-cased: the last-resort match
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

-- Every Message-ID a mailbox knows, and the conversation it belongs to: received
-- messages' own, and sent messages' (the one sealed and those the mail service
-- reported when it set its own). A message naming one of these in In-Reply-To or
-- References joins that conversation.
CREATE TABLE mail_thread_message_ids (
    mailbox_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    thread_id  TEXT NOT NULL,
    PRIMARY KEY (mailbox_id, message_id)
) WITHOUT ROWID;
CREATE INDEX mail_thread_message_ids_by_thread ON mail_thread_message_ids (thread_id);

-- Who has read a conversation, up to which received message (its time): a
-- conversation is unread for a reader when mail arrived after that.
CREATE TABLE mail_thread_reads (
    thread_id TEXT NOT NULL,
    reader    TEXT NOT NULL,                      -- usr_… or agt_…
    read_up_to INTEGER NOT NULL,
    PRIMARY KEY (thread_id, reader)
) WITHOUT ROWID;

ALTER TABLE receipts ADD COLUMN thread_id TEXT;
-- The receiving service's stamp (Authentication-Results from mx.cloudflare.net):
-- the verdict, and the SPF, DKIM and DMARC results it was derived from.
ALTER TABLE receipts ADD COLUMN sender_authentication TEXT NOT NULL DEFAULT 'unverified'
    CHECK (sender_authentication IN ('authenticated', 'failed', 'unverified'));
ALTER TABLE receipts ADD COLUMN authentication_json TEXT NOT NULL DEFAULT '{}';
CREATE INDEX receipts_by_thread ON receipts (thread_id);

-- A send belongs to the conversation it answers, or starts one when it is sealed.
-- The Message-IDs the mail service reported for it (it sets its own on what
-- leaves) are recorded like the delivery, outside the seal.
ALTER TABLE sends ADD COLUMN thread_id TEXT;
ALTER TABLE sends ADD COLUMN sent_message_ids_json TEXT NOT NULL DEFAULT '[]';
CREATE INDEX sends_by_thread ON sends (thread_id);

-- Mail stored before: each receipt joins the conversation of the earliest message
-- its In-Reply-To leads back to in the same mailbox (one conversation per root),
-- named after that root's receipt.
CREATE TABLE receipt_roots AS
WITH RECURSIVE climb (receipt_id, mailbox_id, at_id, depth) AS (
    SELECT id, mailbox_id, id, 0 FROM receipts
    UNION ALL
    SELECT climb.receipt_id, climb.mailbox_id, parent.id, climb.depth + 1
    FROM climb
    JOIN receipts child ON child.id = climb.at_id
    JOIN receipts parent ON parent.mailbox_id = climb.mailbox_id
        AND parent.message_id = json_extract(child.in_reply_to_json, '$[0]')
    WHERE climb.depth < 50 AND parent.id != child.id
)
SELECT receipt_id, (SELECT c.at_id FROM climb c WHERE c.receipt_id = climb.receipt_id ORDER BY c.depth DESC LIMIT 1) AS root_id
FROM climb GROUP BY receipt_id;

UPDATE receipts SET thread_id = 'thr_' || substr((SELECT root_id FROM receipt_roots WHERE receipt_id = receipts.id), 5);

INSERT INTO mail_threads (id, mailbox_id, subject, subject_key, created_at, last_activity_at, last_received_at,
                          received_count, latest_receipt_id)
SELECT r.thread_id, r.mailbox_id,
       (SELECT root.subject FROM receipts root WHERE root.thread_id = r.thread_id ORDER BY root.rowid LIMIT 1),
       '', min(r.received_at), max(r.received_at), max(r.received_at), count(*),
       (SELECT latest.id FROM receipts latest WHERE latest.thread_id = r.thread_id ORDER BY latest.rowid DESC LIMIT 1)
FROM receipts r GROUP BY r.thread_id;

INSERT OR IGNORE INTO mail_thread_message_ids (mailbox_id, message_id, thread_id)
SELECT mailbox_id, message_id, thread_id FROM receipts;

-- What an agent read is read back from the audit chain by its actor, to tell an
-- approver whether the agent behind a draft read unauthenticated mail.
CREATE INDEX audit_entries_by_actor ON audit_entries (actor, action, at);

-- Sends stored before join the conversation of the message they answer.
UPDATE sends SET thread_id = (SELECT r.thread_id FROM receipts r WHERE r.id = sends.reply_to)
WHERE reply_to IS NOT NULL;

INSERT OR IGNORE INTO mail_thread_message_ids (mailbox_id, message_id, thread_id)
SELECT mailbox_id, message_id, thread_id FROM sends
WHERE thread_id IS NOT NULL AND message_id IS NOT NULL AND state IN ('sealed', 'dispatched', 'failed');

UPDATE mail_threads SET
    sent_count = (SELECT count(*) FROM sends s WHERE s.thread_id = mail_threads.id AND s.state IN ('sealed', 'dispatched', 'failed')),
    last_activity_at = max(last_activity_at, coalesce((SELECT max(s.sealed_at) FROM sends s WHERE s.thread_id = mail_threads.id
        AND s.state IN ('sealed', 'dispatched', 'failed')), 0));

DROP TABLE receipt_roots;
