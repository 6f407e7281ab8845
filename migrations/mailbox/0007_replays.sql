-- How many times the move has replayed D1's noted changes into this database
-- (decision 0040, `mail::moving`): a replay is written behind a guard that
-- the count is the one it read before it read D1, and raises it, so a replay
-- that read D1 before another wrote never writes older rows over newer; and
-- a verification that sees the count change starts again.
CREATE TABLE mail_move_replays (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    replays INTEGER NOT NULL
);
