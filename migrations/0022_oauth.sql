-- OAuth 2.1 for MCP clients (decision 0026). A person's consent mints an agent
-- they sponsor; the connection says which client it was for. Registered clients
-- are not stored: a client id carries its registration, signed.

CREATE TABLE oauth_connections (
    agent_id     TEXT PRIMARY KEY REFERENCES agents (id),
    client_id    TEXT NOT NULL,
    client_name  TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    resource     TEXT NOT NULL,
    connected_at INTEGER NOT NULL,
    last_used_at INTEGER
);

-- Authorization codes: single-use, minutes long, bound to the client, its exact
-- redirect URI, the PKCE challenge and the resource.
CREATE TABLE oauth_codes (
    code_hash      TEXT PRIMARY KEY,           -- SHA-256 of the code
    agent_id       TEXT NOT NULL REFERENCES agents (id),
    client_id      TEXT NOT NULL,
    redirect_uri   TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    resource       TEXT NOT NULL,
    expires_at     INTEGER NOT NULL,
    redeemed_at    INTEGER
);
CREATE INDEX oauth_codes_by_agent ON oauth_codes (agent_id);

-- Refresh tokens rotate: each works once. One presented again (spent_at set)
-- ends the grant, since only a thief or a replay would present it.
CREATE TABLE oauth_refresh_tokens (
    token_hash TEXT PRIMARY KEY,               -- SHA-256 of the token
    agent_id   TEXT NOT NULL REFERENCES agents (id),
    issued_at  INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    spent_at   INTEGER
);
CREATE INDEX oauth_refresh_tokens_by_agent ON oauth_refresh_tokens (agent_id);
