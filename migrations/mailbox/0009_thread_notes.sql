-- Internal notes in a conversation (decision 0047), as D1 keeps them for a
-- mailbox not yet moved (migration 0040): the move copies them here.
CREATE TABLE thread_notes (
    id            TEXT PRIMARY KEY,               -- nte_…
    thread_id     TEXT NOT NULL REFERENCES mail_threads (id) ON DELETE CASCADE,
    author        TEXT NOT NULL,                  -- usr_… or agt_…
    text          TEXT NOT NULL,
    mentions_json TEXT NOT NULL DEFAULT '[]',     -- the people told, usr_…, in order
    created_at    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX thread_notes_by_thread ON thread_notes (thread_id, created_at, id);
