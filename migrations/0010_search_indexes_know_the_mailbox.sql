-- Both search indexes also index the receipt's mailbox, so a search walks only
-- the rows of the mailboxes its caller may search: FTS5 skips the rest of the
-- node within its own lists (decision 0014). The caller's words are matched in
-- the other columns alone. Rebuilt from the receipts they index.
DROP TABLE receipt_headers_index;
DROP TABLE receipt_bodies_index;
CREATE VIRTUAL TABLE receipt_headers_index USING fts5 (
    from_address, from_name, recipients, subject, mailbox_id,
    content = 'receipts', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE receipt_bodies_index USING fts5 (
    text_body, mailbox_id,
    content = 'receipts', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO receipt_headers_index (receipt_headers_index) VALUES ('rebuild');
INSERT INTO receipt_bodies_index (receipt_bodies_index) VALUES ('rebuild');
