-- The audit chain, keyed and sealed after the fact (decision 0015).
--
-- An entry is written in the same batch as the change it records, its `seq`
-- assigned by the database inside that transaction (one more than the last), so
-- concurrent writers never race for it and never retry. It carries `mac`, an HMAC
-- of its own fields under a Worker secret the database does not hold (`key_id`
-- names which). `prev_hash` and `hash` link it into the chain a moment later,
-- when it is sealed: the hash is an HMAC of the previous hash and the entry,
-- under the same key. Entries written before the chain was keyed have neither
-- `key_id` nor `mac`, and keep the unkeyed hash they were written with.
--
-- SQLite cannot relax a NOT NULL constraint in place, so the table is rebuilt.
CREATE TABLE audit_entries_keyed (
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
    key_id     TEXT,                       -- the key of `mac` and `hash`; NULL before the chain was keyed
    mac        TEXT,                       -- HMAC of the entry's own fields, written with it
    prev_hash  TEXT,                       -- NULL until sealed
    hash       TEXT                        -- NULL until sealed
);
INSERT INTO audit_entries_keyed (seq, at, actor, actor_kind, delegator, surface, action, object, outcome, detail, prev_hash, hash)
    SELECT seq, at, actor, actor_kind, delegator, surface, action, object, outcome, detail, prev_hash, hash
    FROM audit_entries;
DROP TABLE audit_entries;
ALTER TABLE audit_entries_keyed RENAME TO audit_entries;

-- What the sealer reads: the entries still waiting for their hash.
CREATE INDEX audit_entries_awaiting_seal ON audit_entries (seq) WHERE hash IS NULL;

-- Refused attempts made without a proven credential (a wrong password, a wrong
-- pairing code, a rate-limited try), counted per window instead of written to the
-- chain one row each: nobody can make the node write at will. Folded into the
-- chain as one entry per window, action and refusal code once the window closes.
CREATE TABLE audit_attempts (
    window_start INTEGER NOT NULL,
    action       TEXT NOT NULL,
    code         TEXT NOT NULL,
    attempts     INTEGER NOT NULL,
    first_at     INTEGER NOT NULL,
    last_at      INTEGER NOT NULL,
    PRIMARY KEY (window_start, action, code)
);
