-- The audit chain cannot be replayed, shortened or silently re-pointed (decision 0027).
--
-- An entry's own MAC now covers a nonce no two entries share (`mac_version` 3),
-- so a copy of a real entry carries a MAC an earlier entry already has: the
-- sealer refuses it and verification names it. Entries written before keep
-- `mac_version` NULL (version 2, no nonce) and verify as they always did, but
-- only ahead of the first version 3 entry.
ALTER TABLE audit_entries ADD COLUMN mac_version INTEGER;  -- NULL: 2, the MAC written before nonces
ALTER TABLE audit_entries ADD COLUMN nonce TEXT;           -- random, covered by the MAC; NULL before version 3

-- What finds a copy: the earlier entries with the same MAC.
CREATE INDEX audit_entries_by_mac ON audit_entries (mac);

-- Who the witness is comes from the chain itself (the last accepted
-- set_audit_witness or remove_audit_witness entry), so a database writer cannot
-- redirect or silence it without a keyed entry; this finds that entry at once.
CREATE INDEX audit_entries_witness_changes ON audit_entries (seq)
    WHERE action IN ('set_audit_witness', 'remove_audit_witness');

-- Every checkpoint, numbered one more than the last, as it is kept in the object
-- store (R2): the two records must agree, so neither can be rolled back alone.
CREATE TABLE audit_checkpoints (
    number        INTEGER PRIMARY KEY,   -- 1, 2, 3…: a second writer of the same number loses here
    seq           INTEGER NOT NULL,      -- the head it records
    checkpoint    TEXT NOT NULL,         -- the signed checkpoint, as JSON, as R2 keeps it
    witnessed_at  INTEGER,               -- when its witness took it (a 2xx, or the mail binding's acceptance)
    witness_error TEXT                   -- why the last attempt to tell the witness did not land
);

-- Alarms already raised, by what failed: a chain that stays broken raises its
-- alarm (an audit entry and a notification to administrators) once, not at
-- every run of the upkeep.
CREATE TABLE audit_alarms (
    key       TEXT PRIMARY KEY,
    raised_at INTEGER NOT NULL
);
