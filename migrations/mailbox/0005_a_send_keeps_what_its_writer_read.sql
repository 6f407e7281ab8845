-- A send keeps how many messages from unauthenticated senders its agent read
-- in the day before submitting (D1's migration 0032 says why): the same
-- column D1's sends gained, held by the same trigger once sealed, so the two
-- schemas stay one.
ALTER TABLE sends ADD COLUMN writer_unverified_reads INTEGER;
DROP TRIGGER sends_sealed_are_immutable;
CREATE TRIGGER sends_sealed_are_immutable
BEFORE UPDATE ON sends
WHEN OLD.state IN ('sealed', 'dispatched', 'failed') AND (
       NEW.id IS NOT OLD.id OR NEW.mailbox_id IS NOT OLD.mailbox_id OR NEW.author IS NOT OLD.author
    OR NEW.to_json IS NOT OLD.to_json OR NEW.cc_json IS NOT OLD.cc_json
    OR NEW.subject IS NOT OLD.subject OR NEW.text IS NOT OLD.text
    OR NEW.in_reply_to IS NOT OLD.in_reply_to OR NEW.references_json IS NOT OLD.references_json
    OR NEW.created_at IS NOT OLD.created_at OR NEW.submitted_at IS NOT OLD.submitted_at
    OR NEW.submitted_by IS NOT OLD.submitted_by OR NEW.submitted_version IS NOT OLD.submitted_version
    OR NEW.decided_at IS NOT OLD.decided_at OR NEW.decided_by IS NOT OLD.decided_by
    OR NEW.refusal_reason IS NOT OLD.refusal_reason
    OR NEW.message_id IS NOT OLD.message_id OR NEW.manifest_hash IS NOT OLD.manifest_hash
    OR NEW.sealed_at IS NOT OLD.sealed_at
    OR NEW.sealed_from_address IS NOT OLD.sealed_from_address
    OR NEW.sealed_from_name IS NOT OLD.sealed_from_name
    OR NEW.writer_unverified_reads IS NOT OLD.writer_unverified_reads
    OR NEW.state NOT IN ('sealed', 'dispatched', 'failed'))
BEGIN
    SELECT RAISE(ABORT, 'refused:sealed_send_is_immutable');
END;
