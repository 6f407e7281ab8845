-- Identity, authority and the audit chain: the tables every later domain builds on.
-- Times are milliseconds since the Unix epoch (UTC). Ids are typed prefix + ULID.

-- People sign in with a password (PBKDF2-SHA256, iteration count stored in the hash).
CREATE TABLE people (
    id            TEXT PRIMARY KEY,            -- usr_…
    email         TEXT NOT NULL UNIQUE,        -- lower-cased; the sign-in name
    name          TEXT NOT NULL,
    password_hash TEXT NOT NULL,               -- pbkdf2-sha256$<iterations>$<salt>$<hash>
    created_at    INTEGER NOT NULL,
    disabled_at   INTEGER                      -- set: cannot sign in, sessions revoked
);

-- One row, ever: its primary key makes two concurrent set-ups collide.
CREATE TABLE node_setup (
    id                  INTEGER PRIMARY KEY CHECK (id = 1),
    completed_at        INTEGER NOT NULL,
    first_administrator TEXT NOT NULL REFERENCES people (id)
);

-- A session is revocation state; authority travels in the signed access token.
CREATE TABLE sessions (
    id                    TEXT PRIMARY KEY,    -- ses_…
    person_id             TEXT NOT NULL REFERENCES people (id),
    refresh_hash          TEXT NOT NULL UNIQUE,-- SHA-256 of the live refresh token
    previous_refresh_hash TEXT,                -- SHA-256 of the one it replaced: reuse detection
    created_at            INTEGER NOT NULL,
    refreshed_at          INTEGER NOT NULL,
    expires_at            INTEGER NOT NULL,
    revoked_at            INTEGER
);
CREATE INDEX sessions_by_person ON sessions (person_id);
CREATE INDEX sessions_by_previous_refresh ON sessions (previous_refresh_hash);

CREATE TABLE teams (
    id         TEXT PRIMARY KEY,               -- tm_…
    name       TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);

CREATE TABLE team_members (
    team_id   TEXT NOT NULL REFERENCES teams (id),
    person_id TEXT NOT NULL REFERENCES people (id),
    added_at  INTEGER NOT NULL,
    PRIMARY KEY (team_id, person_id)
);
CREATE INDEX team_members_by_person ON team_members (person_id);

-- Every grant, Zanzibar style. Read and written only by src/authz/tuples.rs.
CREATE TABLE relation_tuples (
    subject    TEXT NOT NULL,                  -- usr_…, agt_… or tm_…#member
    relation   TEXT NOT NULL,                  -- org.admin, mailbox.content.read, …
    object     TEXT NOT NULL,                  -- org or mbx_…
    granted_at INTEGER NOT NULL,
    granted_by TEXT NOT NULL,
    PRIMARY KEY (subject, relation, object)
);
CREATE INDEX relation_tuples_by_object ON relation_tuples (object, relation);

-- The audit chain. seq is contiguous; a lost race on it aborts the whole batch.
CREATE TABLE audit_entries (
    seq        INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,
    actor      TEXT,
    actor_kind TEXT NOT NULL,
    delegator  TEXT,
    surface    TEXT,
    action     TEXT NOT NULL,
    object     TEXT,
    outcome    TEXT NOT NULL,
    detail     TEXT,
    prev_hash  TEXT NOT NULL,
    hash       TEXT NOT NULL
);

-- Failed sign-ins per account and per address, in 15-minute windows.
CREATE TABLE sign_in_failures (
    key               TEXT PRIMARY KEY,        -- account:<email> or address:<ip>
    failures          INTEGER NOT NULL,
    window_started_at INTEGER NOT NULL
);

-- Never holds a row. A write guard inserts into it when its condition is false,
-- the CHECK fails, and the batch it belongs to rolls back whole.
CREATE TABLE write_guards (
    name TEXT,
    CONSTRAINT write_guard_failed CHECK (0)
);
