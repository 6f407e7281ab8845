-- Moving a mailbox's mail out of D1 into this database (decision 0040,
-- `mail::moving`). Both tables are the move's own machinery, not mail, and
-- D1 has neither: the move's position is kept here, in the same transaction
-- as the rows it copied, so the Worker resumes from what this database holds
-- and a page sent twice fails its guard and rolls back whole.
--
-- How far the copy of each table of mail has got.
CREATE TABLE mail_moves (
    table_name TEXT PRIMARY KEY,
    last_key   TEXT,                        -- JSON array: the key of the last row copied; NULL before the first
    rows       INTEGER NOT NULL,            -- rows copied so far
    finished   INTEGER NOT NULL DEFAULT 0   -- 1 once a page reached the end of the mailbox's rows
);
-- A verification of the move under way: each side's running count and hash
-- of each table (JSON), kept between the Worker's calls and cleared when the
-- verification concludes; `saved` counts its saves, for the guard on the next.
CREATE TABLE mail_move_checks (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    progress TEXT NOT NULL,
    saved    INTEGER NOT NULL
);
