-- A butler's `forward` effect files a copy of a delivery in another mailbox of
-- the node (decision 0023). The copy is an ordinary receipt of that mailbox,
-- sharing the original's stored bytes (deletion already keeps bytes another
-- receipt still names), marked with the butler that filed it so the people who
-- read it there can tell it was not delivered to them.
ALTER TABLE receipts ADD COLUMN filed_by TEXT;
