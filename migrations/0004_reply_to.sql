-- Where a reply should go, when the sender said (the Reply-To header): mailing
-- lists and ticketing systems answer from one address and read replies at another.
ALTER TABLE receipts ADD COLUMN reply_to_json TEXT NOT NULL DEFAULT '[]';
