-- Files a send carries (issue 14, decision 0020). The bytes are in R2 under
-- `outbound/<sha256>`; the row names them by hash, which the version an approver
-- decides on and the sealed manifest carry.
CREATE TABLE send_attachments (
    send_id      TEXT NOT NULL REFERENCES sends (id),
    position     INTEGER NOT NULL,                -- from 0, in the order attached
    name         TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size         INTEGER NOT NULL,
    sha256       TEXT NOT NULL,
    PRIMARY KEY (send_id, position)
) WITHOUT ROWID;

-- What was submitted or sealed carries these files and no others: only a
-- draft's files change.
CREATE TRIGGER send_attachments_change_only_on_drafts_insert
BEFORE INSERT ON send_attachments
WHEN (SELECT state FROM sends WHERE id = NEW.send_id) IS NOT 'draft'
BEGIN
    SELECT RAISE(ABORT, 'refused:send_attachments_only_on_drafts');
END;

CREATE TRIGGER send_attachments_change_only_on_drafts_update
BEFORE UPDATE ON send_attachments
WHEN (SELECT state FROM sends WHERE id = OLD.send_id) IS NOT 'draft'
BEGIN
    SELECT RAISE(ABORT, 'refused:send_attachments_only_on_drafts');
END;

CREATE TRIGGER send_attachments_change_only_on_drafts_delete
BEFORE DELETE ON send_attachments
WHEN (SELECT state FROM sends WHERE id = OLD.send_id) IS NOT 'draft'
BEGIN
    SELECT RAISE(ABORT, 'refused:send_attachments_only_on_drafts');
END;
