-- Agents: principals that act in their own right under a named sponsor's
-- authority, with a ceiling of routes pinned at mint.

CREATE TABLE agents (
    id              TEXT PRIMARY KEY,          -- agt_…
    name            TEXT NOT NULL,
    sponsor_id      TEXT NOT NULL REFERENCES people (id),
    credential_hash TEXT,                      -- SHA-256 of the mr_agt_ credential; NULL until paired
    created_at      INTEGER NOT NULL,
    created_by      TEXT NOT NULL,
    expires_at      INTEGER,
    paused_at       INTEGER,
    revoked_at      INTEGER
);
CREATE INDEX agents_by_sponsor ON agents (sponsor_id);

-- The ceiling: the routes (by tool name) the chosen capabilities expanded to at
-- mint. Nothing widens it; a renamed route leaves a name that matches nothing.
CREATE TABLE agent_routes (
    agent_id TEXT NOT NULL REFERENCES agents (id),
    route    TEXT NOT NULL,
    PRIMARY KEY (agent_id, route)
);

-- Single-use codes an agent's software redeems for its credential.
CREATE TABLE pairing_codes (
    code_hash   TEXT PRIMARY KEY,              -- SHA-256 of the code
    agent_id    TEXT NOT NULL REFERENCES agents (id),
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    redeemed_at INTEGER
);
CREATE INDEX pairing_codes_by_agent ON pairing_codes (agent_id);
