-- The envelope recipients the mail binding has accepted a send for. A send whose
-- dispatch failed part-way can then be handed over again to the others alone, so
-- nobody receives it twice. Not covered by the seal: it records what happened to
-- the sealed message, not what the message is.
ALTER TABLE sends ADD COLUMN delivered_json TEXT NOT NULL DEFAULT '[]';
