-- Agent messaging (SPEC §10): every agent's durable inbox, conversations, and
-- the delivery policy its owner sets. Every operation on a message is one
-- guarded statement: the state, the lease and the fencing token live in the
-- message's own row, so a stale holder's write matches nothing.

CREATE TABLE agent_messages (
    id               TEXT PRIMARY KEY,              -- amg_…
    conversation_id  TEXT NOT NULL,                 -- cnv_…
    sender_id        TEXT NOT NULL,                 -- agt_… or usr_…
    recipient_id     TEXT NOT NULL,                 -- agt_…, or for a reply whoever sent the request
    kind             TEXT NOT NULL CHECK (kind IN ('request', 'event', 'reply')),
    in_reply_to      TEXT,                          -- a reply's request
    content          TEXT NOT NULL,                 -- JSON
    body_hash        TEXT NOT NULL,                 -- what an idempotent repeat must match
    idempotency_key  TEXT NOT NULL,
    -- How the request came: 'a2a' requests are tasks, whose replies are read
    -- through the task rather than claimed.
    surface          TEXT NOT NULL DEFAULT 'rest',
    -- queued, leased, acknowledged, answered, rejected, refused, failed,
    -- expired, canceled, delivered. A lapsed lease stays 'leased' until the next
    -- claim or sweep: every reader judges the lease against the clock.
    state            TEXT NOT NULL,
    reason           TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    fencing_token    INTEGER NOT NULL DEFAULT 0,
    lease_granted_at INTEGER,                       -- the current lease's grant (the 12-hour cap runs from it)
    lease_expires_at INTEGER,
    reply_id         TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    expires_at       INTEGER NOT NULL,
    UNIQUE (sender_id, idempotency_key)
);
CREATE INDEX agent_messages_inbox ON agent_messages (recipient_id, state, created_at, id);
CREATE INDEX agent_messages_grants ON agent_messages (recipient_id, lease_granted_at);
CREATE INDEX agent_messages_sent ON agent_messages (sender_id, updated_at, id);
CREATE INDEX agent_messages_conversation ON agent_messages (conversation_id, created_at);
CREATE INDEX agent_messages_unfinished ON agent_messages (expires_at) WHERE state IN ('queued', 'leased');
CREATE INDEX agent_messages_leases ON agent_messages (lease_expires_at) WHERE state = 'leased';

CREATE TABLE agent_conversations (
    id           TEXT PRIMARY KEY,                  -- cnv_…
    started_by   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_activity_at INTEGER NOT NULL,
    canceled_at  INTEGER,
    canceled_by  TEXT
);

-- Who takes part in a conversation: written with each message, read by every
-- listing and by the participant checks.
CREATE TABLE agent_conversation_participants (
    conversation_id TEXT NOT NULL,
    participant_id  TEXT NOT NULL,
    PRIMARY KEY (conversation_id, participant_id)
);
CREATE INDEX agent_conversation_participants_by_participant ON agent_conversation_participants (participant_id);

-- An agent's delivery policy; an agent without a row has the contract's defaults.
CREATE TABLE agent_messaging_policies (
    agent_id          TEXT PRIMARY KEY REFERENCES agents (id),
    allowed_peers     TEXT,                         -- JSON array of ids; NULL: everyone on the node
    rate_per_minute   INTEGER,
    pending_cap       INTEGER,
    maximum_attempts  INTEGER,
    updated_at        INTEGER NOT NULL,
    updated_by        TEXT NOT NULL
);

-- When an agent last looked at its inbox, to the minute.
ALTER TABLE agents ADD COLUMN last_seen_at INTEGER;
