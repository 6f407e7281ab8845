-- The mailbox's segment of the audit chain (decision 0040): an entry for each
-- change of the mailbox's mail, appended in the same transaction as the change,
-- keyed and sealed as the organisation's entries in D1 are (the same columns,
-- so the chain's statements run on either), its MACs and seals also covering
-- the mailbox's id. The organisation's chain anchors the segment's head.
CREATE TABLE audit_entries (
    seq         INTEGER PRIMARY KEY,
    at          INTEGER NOT NULL,
    actor       TEXT,
    actor_kind  TEXT NOT NULL,
    delegator   TEXT,
    surface     TEXT,
    action      TEXT NOT NULL,
    object      TEXT,
    outcome     TEXT NOT NULL,
    detail      TEXT,
    key_id      TEXT,
    mac         TEXT,
    prev_hash   TEXT,                       -- NULL until sealed
    hash        TEXT,                       -- NULL until sealed
    mac_version INTEGER,
    nonce       TEXT
);
CREATE INDEX audit_entries_awaiting_seal ON audit_entries (seq) WHERE hash IS NULL;
-- Finds an entry copied within the segment (the chain's COPY_OF).
CREATE INDEX audit_entries_by_mac ON audit_entries (mac);
