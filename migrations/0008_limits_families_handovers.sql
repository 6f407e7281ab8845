-- Limits that hold under concurrency and cannot be aimed at a person, refresh
-- token families, and who handed an agent its credential (decision 0016).

-- A failure window's key is now `<kind>:<SHA-256 of what it counts>`, so its length
-- is bounded whatever a caller sends; windows that ended are deleted by the
-- scheduled upkeep. Beyond an account's ceiling, attempts from addresses it never
-- signed in from are admitted one at a time: `last_admitted_by` names the attempt
-- that took the last slot, and `last_admitted_at` when.
ALTER TABLE sign_in_failures ADD COLUMN last_admitted_at INTEGER;
ALTER TABLE sign_in_failures ADD COLUMN last_admitted_by TEXT;

-- Where a person has signed in from: their own addresses are never slowed by what
-- others try against their account. Keyed by SHA-256 of the account and address.
CREATE TABLE sign_in_known (
    key             TEXT PRIMARY KEY,
    last_success_at INTEGER NOT NULL
);

-- Every refresh token a session has spent: presenting any of them again (not just
-- the last) ends the session, because only a copy would be presented twice.
CREATE TABLE spent_refresh_tokens (
    token_hash TEXT PRIMARY KEY,                 -- SHA-256 of the spent token
    session_id TEXT NOT NULL REFERENCES sessions (id),
    spent_at   INTEGER NOT NULL
);
CREATE INDEX spent_refresh_tokens_by_session ON spent_refresh_tokens (session_id);
INSERT INTO spent_refresh_tokens (token_hash, session_id, spent_at)
    SELECT previous_refresh_hash, id, refreshed_at FROM sessions WHERE previous_refresh_hash IS NOT NULL;

-- Who handed an agent its working credential: the administrator who minted it with
-- the credential shown, or who issued the pairing code it was redeemed with. Neither
-- may be the second person on a send the agent submits.
ALTER TABLE pairing_codes ADD COLUMN issued_by TEXT;
ALTER TABLE agents ADD COLUMN credential_issued_by TEXT;
