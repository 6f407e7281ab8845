-- Agents across organisations (SPEC §14, decision 0050). An agent here sends
-- to an agent elsewhere, named by its A2A card, through a durable outbox; and
-- another organisation's node reaches agents here with the credential an
-- administrator issued for it.

-- Another organisation this node converses with. `credential_hash` is the
-- SHA-256 of the credential issued to it (shown once, never stored); the
-- credential it issued to this node is kept as given, since this node must
-- present it, and is never shown again.
CREATE TABLE peers (
    id                   TEXT PRIMARY KEY,          -- per_…
    domain               TEXT NOT NULL,             -- the host its node answers on
    name                 TEXT NOT NULL,
    credential_hash      TEXT NOT NULL,
    outbound_credential  TEXT,
    created_at           INTEGER NOT NULL,
    created_by           TEXT NOT NULL,
    revoked_at           INTEGER,
    revoked_by           TEXT
);
CREATE UNIQUE INDEX peers_live_domain ON peers (domain) WHERE revoked_at IS NULL;

-- An agent elsewhere, named by its card's URL; its id is derived from that URL,
-- so a sender and a recipient named by the same card are one row without a
-- read first. What its card said is cached here as long as its HTTP caching
-- headers allow.
CREATE TABLE remote_agents (
    id                TEXT PRIMARY KEY,             -- rag_…, derived from card_url
    card_url          TEXT NOT NULL UNIQUE,
    domain            TEXT NOT NULL,
    peer_id           TEXT,                         -- the peer it spoke for, when it sent here
    name              TEXT,
    endpoint_url      TEXT,                         -- the JSON-RPC endpoint its card names
    protocol_version  TEXT,                         -- '1.0' or '0.3'
    push_notifications INTEGER NOT NULL DEFAULT 0,  -- whether its card says it pushes a task's changes
    card_read_at      INTEGER,
    card_fresh_until  INTEGER,
    created_at        INTEGER NOT NULL
);

-- The outbox: one row per message to an agent elsewhere, and where its
-- delivery stands. `state` is the outbox's own: 'pending' (not yet accepted by
-- the remote), 'sent' (accepted, its task polled for the answer), 'done' (the
-- answer, or the task's end, came back), 'dead' (given up: the message failed).
CREATE TABLE remote_deliveries (
    message_id        TEXT PRIMARY KEY,             -- amg_…
    remote_agent_id   TEXT NOT NULL,
    sender_id         TEXT NOT NULL,
    state             TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'done', 'dead')),
    attempts          INTEGER NOT NULL DEFAULT 0,
    next_attempt_at   INTEGER NOT NULL,
    claimed_until     INTEGER NOT NULL DEFAULT 0,
    remote_task_id    TEXT,
    -- The agent elsewhere's context for the task (A2A `contextId`): the next
    -- message of the conversation to that agent continues it.
    remote_context_id TEXT,
    last_error        TEXT,
    -- When the agent elsewhere last pushed word that its task changed: a push
    -- that lands while a run works on the delivery makes it due again at once.
    pushed_at         INTEGER,
    -- The last word of progress the task gave while working (its status
    -- message's id), brought into the conversation once.
    progress_key      TEXT,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
);
CREATE INDEX remote_deliveries_due ON remote_deliveries (next_attempt_at) WHERE state IN ('pending', 'sent');
CREATE INDEX remote_deliveries_by_sender ON remote_deliveries (sender_id, created_at);

-- Every attempt the outbox made, as its owner sees it.
CREATE TABLE remote_delivery_attempts (
    message_id  TEXT NOT NULL,
    attempt     INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    step        TEXT NOT NULL CHECK (step IN ('card', 'send', 'poll')),
    attempt_outcome TEXT NOT NULL CHECK (attempt_outcome IN ('ok', 'retrying', 'failed')),
    detail      TEXT NOT NULL,
    PRIMARY KEY (message_id, attempt)
) WITHOUT ROWID;

-- The outbound policy an agent's owner sets: which agents elsewhere it may
-- reach (JSON array of domains or card URLs; NULL: none, the default), and how
-- many messages it may send them an hour.
ALTER TABLE agent_messaging_policies ADD COLUMN remote_recipients TEXT;
ALTER TABLE agent_messaging_policies ADD COLUMN remote_per_hour INTEGER;
