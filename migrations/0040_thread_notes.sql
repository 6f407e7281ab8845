-- Internal notes in a conversation (decision 0047): what a mailbox's people
-- write to each other beside its mail, with the people each mentions. Mail
-- of the mailbox, so kept where its conversations are: here while they are in
-- D1, and in the mailbox's own database (its migration 0009) once moved,
-- with the same table. A conversation is never deleted today; should that
-- change, its notes go with it.
CREATE TABLE thread_notes (
    id            TEXT PRIMARY KEY,               -- nte_…
    thread_id     TEXT NOT NULL REFERENCES mail_threads (id) ON DELETE CASCADE,
    author        TEXT NOT NULL,                  -- usr_… or agt_…
    text          TEXT NOT NULL,
    mentions_json TEXT NOT NULL DEFAULT '[]',     -- the people told, usr_…, in order
    created_at    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX thread_notes_by_thread ON thread_notes (thread_id, created_at, id);

-- Noted while the mailbox's mail moves, as every table of mail is
-- (migration 0035): the move replays the notes written during its copy.
CREATE TRIGGER thread_notes_insert_while_moving
AFTER INSERT ON thread_notes
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'thread_notes', json_array(NEW.id), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER thread_notes_update_while_moving
AFTER UPDATE ON thread_notes
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'thread_notes', json_array(NEW.id), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'thread_notes', json_array(OLD.id), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = OLD.thread_id) AND mail_moved_at IS NULL AND json_array(OLD.id) IS NOT json_array(NEW.id)
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER thread_notes_delete_while_moving
AFTER DELETE ON thread_notes
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = OLD.thread_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = OLD.thread_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'thread_notes', json_array(OLD.id), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = OLD.thread_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;


-- A conversation deleted while its mailbox moves notes its notes too, as it
-- notes its reads and labels.
DROP TRIGGER mail_threads_delete_while_moving;
CREATE TRIGGER mail_threads_delete_while_moving
AFTER DELETE ON mail_threads
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = OLD.mailbox_id AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = OLD.mailbox_id AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'mail_threads', json_array(OLD.rowid), 1 FROM mailboxes WHERE id = OLD.mailbox_id AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT m.id, 'mail_thread_reads', json_array(c.thread_id, c.reader), 1 FROM mailboxes m JOIN mail_thread_reads c ON c.thread_id = OLD.id
     WHERE m.id = OLD.mailbox_id AND m.mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT m.id, 'thread_labels', json_array(c.thread_id, c.label), 1 FROM mailboxes m JOIN thread_labels c ON c.thread_id = OLD.id
     WHERE m.id = OLD.mailbox_id AND m.mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT m.id, 'thread_notes', json_array(c.id), 1 FROM mailboxes m JOIN thread_notes c ON c.thread_id = OLD.id
     WHERE m.id = OLD.mailbox_id AND m.mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;
