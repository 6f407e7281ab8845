-- How many times the move has replayed D1's noted changes into this database
-- (decision 0040, `mail::moving`): a replay is written behind a guard that
-- the count is the one it read before it read D1, and raises it, so a replay
-- that read D1 before another wrote never writes older rows over newer; and
-- a verification that sees the count change starts again.
CREATE TABLE mail_move_replays (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    replays INTEGER NOT NULL
);

-- D1's machinery for removing its copy of a moved mailbox's mail (D1's
-- migration 0035), kept here too so the triggers on mail read alike in both
-- schemas: it never holds a row here.
CREATE TABLE mail_emptying (
    mailbox_id TEXT PRIMARY KEY
) WITHOUT ROWID;

-- A sealed send and its files are never deleted, but by the removal of D1's
-- copy of a moved mailbox's mail, which names the mailbox in `mail_emptying`
-- for its transaction. The same in both schemas, which are held to each other.
DROP TRIGGER sends_sealed_are_never_deleted;
CREATE TRIGGER sends_sealed_are_never_deleted
BEFORE DELETE ON sends
WHEN OLD.state IN ('sealed', 'dispatched', 'failed')
 AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = OLD.mailbox_id)
BEGIN
    SELECT RAISE(ABORT, 'refused:sealed_send_is_immutable');
END;
DROP TRIGGER send_attachments_change_only_on_drafts_delete;
CREATE TRIGGER send_attachments_change_only_on_drafts_delete
BEFORE DELETE ON send_attachments
WHEN (SELECT state FROM sends WHERE id = OLD.send_id) IS NOT 'draft'
 AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = (SELECT mailbox_id FROM sends WHERE id = OLD.send_id))
BEGIN
    SELECT RAISE(ABORT, 'refused:send_attachments_only_on_drafts');
END;
