-- What a received message may make the node store, and deleting received mail
-- (decision 0017; the limits are `mailroom_contract::api::limits`).

-- A receipt keeps the first 100 To and 100 Cc recipients and the first 125
-- attachments' metadata; these count the rest, so a summary can say how many
-- there were. Zero for everything stored before, except what is cut below.
ALTER TABLE receipts ADD COLUMN to_not_kept INTEGER NOT NULL DEFAULT 0;
ALTER TABLE receipts ADD COLUMN cc_not_kept INTEGER NOT NULL DEFAULT 0;
ALTER TABLE receipts ADD COLUMN attachments_not_listed INTEGER NOT NULL DEFAULT 0;

-- Whether another receipt still refers to a message's original bytes (the same
-- message delivered to two mailboxes is stored once), asked when one is deleted.
CREATE INDEX receipts_by_raw_key ON receipts (raw_key);

-- Where a deleted receipt was in storage order (its rowid), so a page of a list
-- or a search that ended at it continues from there (`messages::stored_before`).
CREATE TABLE deleted_receipts (
    id     TEXT PRIMARY KEY,                 -- rcp_…
    stored INTEGER NOT NULL
);

-- Original bytes owed deletion from R2: written with the deletion of the last
-- receipt that referred to them, in the same batch, and removed once R2 has
-- deleted them; the scheduled upkeep deletes whatever is left here.
CREATE TABLE originals_to_delete (
    raw_key TEXT PRIMARY KEY,
    since   INTEGER NOT NULL
);

-- Receipts stored before the limits, cut to them like new ones, so that every
-- stored receipt is within them. Only the receipts over a limit are touched, and
-- their header index entries are taken out with the old values and put back with
-- the new (the index keeps no text of its own).
CREATE TABLE receipts_over_limits AS
SELECT rowid AS stored FROM receipts
WHERE json_array_length(to_json) > 100 OR json_array_length(cc_json) > 100
   OR json_array_length(reply_to_json) > 100
   OR json_array_length(in_reply_to_json) > 20 OR json_array_length(references_json) > 20
   OR json_array_length(attachments_json) > 125
   OR length(subject) > 998 OR length(from_name) > 256 OR length(from_address) > 254
   OR EXISTS (SELECT 1 FROM json_each(receipts.to_json) AS a
              WHERE length(json_extract(a.value, '$.address')) > 254 OR length(json_extract(a.value, '$.name')) > 256)
   OR EXISTS (SELECT 1 FROM json_each(receipts.cc_json) AS a
              WHERE length(json_extract(a.value, '$.address')) > 254 OR length(json_extract(a.value, '$.name')) > 256)
   OR EXISTS (SELECT 1 FROM json_each(receipts.reply_to_json) AS a
              WHERE length(json_extract(a.value, '$.address')) > 254 OR length(json_extract(a.value, '$.name')) > 256)
   OR EXISTS (SELECT 1 FROM json_each(receipts.in_reply_to_json) AS i WHERE length(CAST(i.value AS BLOB)) > 250)
   OR EXISTS (SELECT 1 FROM json_each(receipts.references_json) AS i WHERE length(CAST(i.value AS BLOB)) > 250)
   OR EXISTS (SELECT 1 FROM json_each(receipts.attachments_json) AS a
              WHERE length(json_extract(a.value, '$.name')) > 255 OR length(json_extract(a.value, '$.content_type')) > 255);

INSERT INTO receipt_headers_index (receipt_headers_index, rowid, from_address, from_name, recipients, subject, mailbox_id)
SELECT 'delete', r.rowid, r.from_address, r.from_name, r.recipients, r.subject, r.mailbox_id
FROM receipts r JOIN receipts_over_limits o ON o.stored = r.rowid;

-- Addresses: the first 100 of each list whose address is at most 254 characters,
-- names cut to 256; the rest counted.
UPDATE receipts SET
    to_not_kept = json_array_length(to_json) - min(100, (SELECT count(*) FROM json_each(receipts.to_json) AS a
        WHERE length(json_extract(a.value, '$.address')) <= 254)),
    cc_not_kept = json_array_length(cc_json) - min(100, (SELECT count(*) FROM json_each(receipts.cc_json) AS a
        WHERE length(json_extract(a.value, '$.address')) <= 254)),
    to_json = (SELECT json_group_array(json_object('address', json_extract(a.value, '$.address'), 'name', substr(json_extract(a.value, '$.name'), 1, 256)))
        FROM (SELECT value FROM json_each(receipts.to_json) WHERE length(json_extract(value, '$.address')) <= 254 ORDER BY key LIMIT 100) AS a),
    cc_json = (SELECT json_group_array(json_object('address', json_extract(a.value, '$.address'), 'name', substr(json_extract(a.value, '$.name'), 1, 256)))
        FROM (SELECT value FROM json_each(receipts.cc_json) WHERE length(json_extract(value, '$.address')) <= 254 ORDER BY key LIMIT 100) AS a),
    reply_to_json = (SELECT json_group_array(json_object('address', json_extract(a.value, '$.address'), 'name', substr(json_extract(a.value, '$.name'), 1, 256)))
        FROM (SELECT value FROM json_each(receipts.reply_to_json) WHERE length(json_extract(value, '$.address')) <= 254 ORDER BY key LIMIT 100) AS a),
    in_reply_to_json = (SELECT json_group_array(i.value)
        FROM (SELECT value FROM json_each(receipts.in_reply_to_json) WHERE length(CAST(value AS BLOB)) <= 250 ORDER BY key LIMIT 20) AS i),
    references_json = (SELECT json_group_array(i.value)
        FROM (SELECT key, value FROM (SELECT key, value FROM json_each(receipts.references_json) WHERE length(CAST(value AS BLOB)) <= 250
              ORDER BY key DESC LIMIT 20) ORDER BY key) AS i),
    attachments_not_listed = max(0, json_array_length(attachments_json) - 125),
    attachments_json = (SELECT json_group_array(json_object('index', json_extract(a.value, '$.index'), 'name', substr(json_extract(a.value, '$.name'), 1, 255),
            'content_type', substr(json_extract(a.value, '$.content_type'), 1, 255), 'size', json_extract(a.value, '$.size')))
        FROM (SELECT value FROM json_each(receipts.attachments_json) ORDER BY key LIMIT 125) AS a),
    subject = substr(subject, 1, 998),
    from_name = substr(from_name, 1, 256),
    from_address = CASE WHEN length(from_address) > 254 THEN NULL ELSE from_address END
WHERE rowid IN (SELECT stored FROM receipts_over_limits);

-- What search reads of the recipients: the names and addresses kept.
UPDATE receipts SET recipients = coalesce((
    SELECT group_concat(CASE WHEN json_extract(a.value, '$.name') IS NULL THEN json_extract(a.value, '$.address')
                             ELSE json_extract(a.value, '$.name') || ' ' || json_extract(a.value, '$.address') END, ' ')
    FROM (SELECT key, value FROM json_each(receipts.to_json)
          UNION ALL SELECT key + 100, value FROM json_each(receipts.cc_json) ORDER BY 1) AS a), '')
WHERE rowid IN (SELECT stored FROM receipts_over_limits);

INSERT INTO receipt_headers_index (rowid, from_address, from_name, recipients, subject, mailbox_id)
SELECT r.rowid, r.from_address, r.from_name, r.recipients, r.subject, r.mailbox_id
FROM receipts r JOIN receipts_over_limits o ON o.stored = r.rowid;

DROP TABLE receipts_over_limits;
