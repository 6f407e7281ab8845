-- A decision names the version of a send its decider was shown (issue 11):
-- every submission is a new version, hashed into `sends.submitted_version` and
-- kept whole in `send_versions`, so that approving or refusing an older one is
-- refused saying what changed. Sends submitted before this have no recorded
-- version; the node computes theirs from the row as it stands.
ALTER TABLE sends ADD COLUMN submitted_version TEXT;

CREATE TABLE send_versions (
    send_id         TEXT NOT NULL,
    version         TEXT NOT NULL,               -- SHA-256 of submission_json's content
    submission_json TEXT NOT NULL,               -- what was submitted, as the approver sees it
    submitted_at    INTEGER NOT NULL,
    PRIMARY KEY (send_id, version)
);

-- A sealed send's version is part of what was approved, so the trigger that keeps
-- a sealed send immutable now guards it, and every other column too, except what
-- dispatch records afterwards (state among the sealed ones, updated_at,
-- dispatched_at, dispatch_error, delivered_json) and reply_to, the link to the
-- received message it answers, which deleting that message clears (the
-- In-Reply-To it was sealed with stays).
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
    OR NEW.state NOT IN ('sealed', 'dispatched', 'failed'))
BEGIN
    SELECT RAISE(ABORT, 'refused:sealed_send_is_immutable');
END;
