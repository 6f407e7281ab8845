-- A mailbox's mail moved out of D1 while it keeps changing (decision 0040,
-- `mail::moving`). Its writes cannot be held while the move copies it (Email
-- Routing bounces what is refused, and a large mailbox takes many runs), so
-- from the moment a move begins (`mail_moving_since`) D1 notes the key of
-- every row of the mailbox's mail that a write inserts, changes or deletes
-- (`mail_changes`), in the write's own transaction; the move replays the
-- noted keys into the mailbox's database after its copy, and the batch that
-- points the mailbox at its own database is guarded by "no note left
-- unreplayed", so no write made before it is lost.
--
-- From that batch on, a write to the mailbox's mail in D1 is refused
-- (`refused:mail_moved`): it was decided by a read made before the switch,
-- and would be read by nothing. The call is handled again and follows the
-- mail. Removing D1's copy once the move is verified is the one write
-- allowed, inside a transaction that names the mailbox in `mail_emptying`.
--
-- A row deleted also notes the rows that are its own in other tables (a
-- receipt's butler runs, a conversation's reads and labels, a send's versions
-- and files): D1 may keep them, but they are no longer the mailbox's, and the
-- replay removes them with it.
--
-- The triggers are derived from `mail::moving::MOVED_TABLES` (each table's
-- key and how its mailbox is found); `tests/native/moving_changes.rs` holds
-- the schema to that list.

-- Set when the mailbox's move begins; cleared once D1 holds nothing of it.
ALTER TABLE mailboxes ADD COLUMN mail_moving_since INTEGER;

-- The keys of the rows a write touched in a mailbox whose move began: `key`
-- is the row's key as the move pages by it (a JSON array, as `json_array`
-- writes it); `seq` counts the writes to it, `replayed` is the count the
-- move last replayed, so a note is pending while `seq > replayed`, and a
-- replay that read an older count never marks a newer write as carried.
CREATE TABLE mail_changes (
    mailbox_id TEXT NOT NULL,
    table_name TEXT NOT NULL,
    key        TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    replayed   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (mailbox_id, table_name, key)
) WITHOUT ROWID;
CREATE INDEX mail_changes_pending ON mail_changes (mailbox_id, table_name, key) WHERE seq > replayed;

-- Never holds a row outside the transaction that removes D1's copy of a
-- moved mailbox's mail: its row there lets those deletions through.
CREATE TABLE mail_emptying (
    mailbox_id TEXT PRIMARY KEY
) WITHOUT ROWID;

-- Originals under a key that does not name the mailbox whose receipt refers to
-- them (content-named keys stored before keys named their mailbox, and a
-- butler's copy filed before copies had keys of their own), still referred to
-- by that mailbox's own database, as D1's copy of its receipts said when it
-- was removed: the upkeep asks those mailboxes too before deleting one owed.
CREATE TABLE originals_kept_for (
    raw_key    TEXT NOT NULL,
    mailbox_id TEXT NOT NULL,
    PRIMARY KEY (raw_key, mailbox_id)
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

CREATE TRIGGER receipts_insert_while_moving
AFTER INSERT ON receipts
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = NEW.mailbox_id AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = NEW.mailbox_id AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'receipts', json_array(NEW.rowid), 1 FROM mailboxes WHERE id = NEW.mailbox_id AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER receipts_update_while_moving
AFTER UPDATE ON receipts
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = NEW.mailbox_id AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = NEW.mailbox_id AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'receipts', json_array(NEW.rowid), 1 FROM mailboxes WHERE id = NEW.mailbox_id AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'receipts', json_array(OLD.rowid), 1 FROM mailboxes WHERE id = OLD.mailbox_id AND mail_moved_at IS NULL AND json_array(OLD.rowid) IS NOT json_array(NEW.rowid)
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER receipts_delete_while_moving
AFTER DELETE ON receipts
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = OLD.mailbox_id AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = OLD.mailbox_id AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'receipts', json_array(OLD.rowid), 1 FROM mailboxes WHERE id = OLD.mailbox_id AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT m.id, 'butler_runs', json_array(c.butler_id, c.receipt_id), 1 FROM mailboxes m JOIN butler_runs c ON c.receipt_id = OLD.id
     WHERE m.id = OLD.mailbox_id AND m.mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER mail_threads_insert_while_moving
AFTER INSERT ON mail_threads
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = NEW.mailbox_id AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = NEW.mailbox_id AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'mail_threads', json_array(NEW.rowid), 1 FROM mailboxes WHERE id = NEW.mailbox_id AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER mail_threads_update_while_moving
AFTER UPDATE ON mail_threads
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = NEW.mailbox_id AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = NEW.mailbox_id AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'mail_threads', json_array(NEW.rowid), 1 FROM mailboxes WHERE id = NEW.mailbox_id AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'mail_threads', json_array(OLD.rowid), 1 FROM mailboxes WHERE id = OLD.mailbox_id AND mail_moved_at IS NULL AND json_array(OLD.rowid) IS NOT json_array(NEW.rowid)
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

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
END;

CREATE TRIGGER mail_thread_message_ids_insert_while_moving
AFTER INSERT ON mail_thread_message_ids
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = NEW.mailbox_id AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = NEW.mailbox_id AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'mail_thread_message_ids', json_array(NEW.mailbox_id, NEW.message_id), 1 FROM mailboxes WHERE id = NEW.mailbox_id AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER mail_thread_message_ids_update_while_moving
AFTER UPDATE ON mail_thread_message_ids
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = NEW.mailbox_id AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = NEW.mailbox_id AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'mail_thread_message_ids', json_array(NEW.mailbox_id, NEW.message_id), 1 FROM mailboxes WHERE id = NEW.mailbox_id AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'mail_thread_message_ids', json_array(OLD.mailbox_id, OLD.message_id), 1 FROM mailboxes WHERE id = OLD.mailbox_id AND mail_moved_at IS NULL AND json_array(OLD.mailbox_id, OLD.message_id) IS NOT json_array(NEW.mailbox_id, NEW.message_id)
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER mail_thread_message_ids_delete_while_moving
AFTER DELETE ON mail_thread_message_ids
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = OLD.mailbox_id AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = OLD.mailbox_id AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'mail_thread_message_ids', json_array(OLD.mailbox_id, OLD.message_id), 1 FROM mailboxes WHERE id = OLD.mailbox_id AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER mail_thread_reads_insert_while_moving
AFTER INSERT ON mail_thread_reads
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'mail_thread_reads', json_array(NEW.thread_id, NEW.reader), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER mail_thread_reads_update_while_moving
AFTER UPDATE ON mail_thread_reads
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'mail_thread_reads', json_array(NEW.thread_id, NEW.reader), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'mail_thread_reads', json_array(OLD.thread_id, OLD.reader), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = OLD.thread_id) AND mail_moved_at IS NULL AND json_array(OLD.thread_id, OLD.reader) IS NOT json_array(NEW.thread_id, NEW.reader)
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER mail_thread_reads_delete_while_moving
AFTER DELETE ON mail_thread_reads
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = OLD.thread_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = OLD.thread_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'mail_thread_reads', json_array(OLD.thread_id, OLD.reader), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = OLD.thread_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER thread_labels_insert_while_moving
AFTER INSERT ON thread_labels
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'thread_labels', json_array(NEW.thread_id, NEW.label), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER thread_labels_update_while_moving
AFTER UPDATE ON thread_labels
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'thread_labels', json_array(NEW.thread_id, NEW.label), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = NEW.thread_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'thread_labels', json_array(OLD.thread_id, OLD.label), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = OLD.thread_id) AND mail_moved_at IS NULL AND json_array(OLD.thread_id, OLD.label) IS NOT json_array(NEW.thread_id, NEW.label)
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER thread_labels_delete_while_moving
AFTER DELETE ON thread_labels
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = OLD.thread_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = OLD.thread_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'thread_labels', json_array(OLD.thread_id, OLD.label), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM mail_threads WHERE id = OLD.thread_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER sends_insert_while_moving
AFTER INSERT ON sends
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = NEW.mailbox_id AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = NEW.mailbox_id AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'sends', json_array(NEW.rowid), 1 FROM mailboxes WHERE id = NEW.mailbox_id AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER sends_update_while_moving
AFTER UPDATE ON sends
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = NEW.mailbox_id AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = NEW.mailbox_id AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'sends', json_array(NEW.rowid), 1 FROM mailboxes WHERE id = NEW.mailbox_id AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'sends', json_array(OLD.rowid), 1 FROM mailboxes WHERE id = OLD.mailbox_id AND mail_moved_at IS NULL AND json_array(OLD.rowid) IS NOT json_array(NEW.rowid)
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER sends_delete_while_moving
AFTER DELETE ON sends
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = OLD.mailbox_id AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = OLD.mailbox_id AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'sends', json_array(OLD.rowid), 1 FROM mailboxes WHERE id = OLD.mailbox_id AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT m.id, 'send_versions', json_array(c.rowid), 1 FROM mailboxes m JOIN send_versions c ON c.send_id = OLD.id
     WHERE m.id = OLD.mailbox_id AND m.mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT m.id, 'send_attachments', json_array(c.send_id, c.position), 1 FROM mailboxes m JOIN send_attachments c ON c.send_id = OLD.id
     WHERE m.id = OLD.mailbox_id AND m.mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER send_versions_insert_while_moving
AFTER INSERT ON send_versions
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = NEW.send_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM sends WHERE id = NEW.send_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'send_versions', json_array(NEW.rowid), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = NEW.send_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER send_versions_update_while_moving
AFTER UPDATE ON send_versions
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = NEW.send_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM sends WHERE id = NEW.send_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'send_versions', json_array(NEW.rowid), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = NEW.send_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'send_versions', json_array(OLD.rowid), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = OLD.send_id) AND mail_moved_at IS NULL AND json_array(OLD.rowid) IS NOT json_array(NEW.rowid)
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER send_versions_delete_while_moving
AFTER DELETE ON send_versions
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = OLD.send_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM sends WHERE id = OLD.send_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'send_versions', json_array(OLD.rowid), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = OLD.send_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER send_attachments_insert_while_moving
AFTER INSERT ON send_attachments
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = NEW.send_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM sends WHERE id = NEW.send_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'send_attachments', json_array(NEW.send_id, NEW.position), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = NEW.send_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER send_attachments_update_while_moving
AFTER UPDATE ON send_attachments
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = NEW.send_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM sends WHERE id = NEW.send_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'send_attachments', json_array(NEW.send_id, NEW.position), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = NEW.send_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'send_attachments', json_array(OLD.send_id, OLD.position), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = OLD.send_id) AND mail_moved_at IS NULL AND json_array(OLD.send_id, OLD.position) IS NOT json_array(NEW.send_id, NEW.position)
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER send_attachments_delete_while_moving
AFTER DELETE ON send_attachments
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = OLD.send_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM sends WHERE id = OLD.send_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'send_attachments', json_array(OLD.send_id, OLD.position), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM sends WHERE id = OLD.send_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER butler_runs_insert_while_moving
AFTER INSERT ON butler_runs
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM receipts WHERE id = NEW.receipt_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM receipts WHERE id = NEW.receipt_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'butler_runs', json_array(NEW.butler_id, NEW.receipt_id), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM receipts WHERE id = NEW.receipt_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER butler_runs_update_while_moving
AFTER UPDATE ON butler_runs
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM receipts WHERE id = NEW.receipt_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM receipts WHERE id = NEW.receipt_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'butler_runs', json_array(NEW.butler_id, NEW.receipt_id), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM receipts WHERE id = NEW.receipt_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'butler_runs', json_array(OLD.butler_id, OLD.receipt_id), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM receipts WHERE id = OLD.receipt_id) AND mail_moved_at IS NULL AND json_array(OLD.butler_id, OLD.receipt_id) IS NOT json_array(NEW.butler_id, NEW.receipt_id)
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER butler_runs_delete_while_moving
AFTER DELETE ON butler_runs
WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM receipts WHERE id = OLD.receipt_id) AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL))
BEGIN
    SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes
     WHERE id = (SELECT mailbox_id FROM receipts WHERE id = OLD.receipt_id) AND mail_moved_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id);
    INSERT INTO mail_changes (mailbox_id, table_name, key, seq)
    SELECT id, 'butler_runs', json_array(OLD.butler_id, OLD.receipt_id), 1 FROM mailboxes WHERE id = (SELECT mailbox_id FROM receipts WHERE id = OLD.receipt_id) AND mail_moved_at IS NULL
    ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;
END;
