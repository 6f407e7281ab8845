-- Issue 27 (decision 0029): a sender's verdict covers the From a message shows,
-- and a Message-ID is a claim, not a key.

-- What a message is, as a hash of its own header fields and its body, without
-- the trace the servers on the way add: two deliveries of one message share
-- it (`inbound::content_digest`). Absent for receipts stored before; those are
-- compared by their bytes.
ALTER TABLE receipts ADD COLUMN content_digest TEXT;

-- A message that claims a Message-ID its mailbox already holds, with other
-- content, is kept under a key of its own (`message_id`, under
-- reused.mailroom.invalid) and the id it claimed here, so it is listed, marked
-- and answered by that id. Absent for every other receipt.
ALTER TABLE receipts ADD COLUMN claimed_message_id TEXT;
CREATE INDEX receipts_by_claimed_message_id ON receipts (mailbox_id, claimed_message_id)
    WHERE claimed_message_id IS NOT NULL;

-- Mail stored before was called authenticated on a pass for any domain aligned
-- by a subdomain test, without asking whether the pass was for the From shown;
-- the stamp's domains were not kept, so that cannot be asked now. It is no
-- longer called authenticated, and says why.
UPDATE receipts SET sender_authentication = 'unverified',
    authentication_json = json_set(CASE WHEN json_valid(authentication_json) THEN authentication_json ELSE '{}' END,
                                   '$.basis', 'checked_before_alignment')
WHERE sender_authentication = 'authenticated';
