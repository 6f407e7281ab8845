-- The sender a send was sealed with: the mailbox's address and display name at
-- that moment, which its manifest hash covers. Stored so the hash can be
-- recomputed from the row alone after the mailbox is renamed, and so the send
-- shows the From line that actually left.
ALTER TABLE sends ADD COLUMN sealed_from_address TEXT;
ALTER TABLE sends ADD COLUMN sealed_from_name TEXT;

-- The immutability of a sealed send now covers the sealed sender too.
DROP TRIGGER sends_sealed_are_immutable;
CREATE TRIGGER sends_sealed_are_immutable
BEFORE UPDATE ON sends
WHEN OLD.state IN ('sealed', 'dispatched', 'failed') AND (
       NEW.mailbox_id IS NOT OLD.mailbox_id OR NEW.author IS NOT OLD.author
    OR NEW.to_json IS NOT OLD.to_json OR NEW.cc_json IS NOT OLD.cc_json
    OR NEW.subject IS NOT OLD.subject OR NEW.text IS NOT OLD.text
    OR NEW.in_reply_to IS NOT OLD.in_reply_to OR NEW.references_json IS NOT OLD.references_json
    OR NEW.submitted_by IS NOT OLD.submitted_by OR NEW.decided_by IS NOT OLD.decided_by
    OR NEW.message_id IS NOT OLD.message_id OR NEW.manifest_hash IS NOT OLD.manifest_hash
    OR NEW.sealed_at IS NOT OLD.sealed_at
    OR NEW.sealed_from_address IS NOT OLD.sealed_from_address
    OR NEW.sealed_from_name IS NOT OLD.sealed_from_name
    OR NEW.state NOT IN ('sealed', 'dispatched', 'failed'))
BEGIN
    SELECT RAISE(ABORT, 'refused:sealed_send_is_immutable');
END;
