-- Webhooks (decision 0038): endpoints outside the node told of what changes on
-- a mailbox or an agent, in the Standard Webhooks format. A commit that tells
-- an event queues one delivery per live subscription of its topic in the same
-- batch (INSERT … SELECT), so a change and its deliveries land together; they
-- are posted after the answer, and again by the per-minute schedule after a
-- failure, until delivered or their attempts run out. An A2A push notification
-- config is a webhook of the `a2a` flavour on its requester's topic, told only
-- of its task, and posted the task as A2A has it.
CREATE TABLE webhooks (
    id          TEXT PRIMARY KEY,              -- whk_…
    topic       TEXT NOT NULL,                 -- mailbox:mbx_… or agent:agt_… (core::events::Topic::key)
    subject     TEXT NOT NULL,                 -- the topic's mailbox or agent id
    url         TEXT NOT NULL,                 -- checked by the outbound rule when set and before each post
    kinds       TEXT NOT NULL,                 -- ' kind kind ' (spaces around each), or '' for every kind
    object      TEXT,                          -- only events acting on this id (an A2A push config's task)
    flavour     TEXT NOT NULL DEFAULT 'standard'
                CHECK (flavour IN ('standard', 'a2a')), -- Standard Webhooks, or an A2A push notification config
    settings    TEXT,                          -- an A2A config's JSON: its id, A2A version, token and authentication
    secret      TEXT NOT NULL,                 -- whsec_…; forgotten ('') once removed
    created_by  TEXT NOT NULL,                 -- usr_…: deliveries go only while they still may
    created_at  INTEGER NOT NULL,
    removed_at  INTEGER
);
CREATE INDEX webhooks_live_by_topic ON webhooks (topic) WHERE removed_at IS NULL;

CREATE TABLE webhook_deliveries (
    webhook_id      TEXT NOT NULL REFERENCES webhooks (id),
    id              TEXT NOT NULL,             -- msg_…: the event's message id, sent as webhook-id
    kind            TEXT NOT NULL,
    topic           TEXT NOT NULL,
    object          TEXT,
    committed_at    INTEGER NOT NULL,
    state           TEXT NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'delivered', 'failed', 'withheld')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    claimed_by      TEXT,                      -- the run posting it now
    claimed_until   INTEGER,                   -- after which another run may
    last_status     INTEGER,
    last_error      TEXT,
    last_attempt_at INTEGER,
    PRIMARY KEY (webhook_id, id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_latest ON webhook_deliveries (webhook_id, committed_at);
CREATE INDEX webhook_deliveries_settled ON webhook_deliveries (last_attempt_at) WHERE state != 'pending';
