-- What an approver weighs an agent's send by (decision 0020): how many received
-- messages whose sender was not authenticated the agent read in the day before
-- it submitted. It was counted at every read of a send by joining the chain's
-- entries of the agent's reads to the receipts they named, which cannot work
-- once receipts live in each mailbox's own database (decision 0040). Now each
-- such read is noted here, in the batch that records it, by the route that
-- showed the text (or the original, or a file) and so knows its sender's
-- verdict; the count is taken from here when the agent submits and kept on
-- the send.
--
-- One row per agent and message, at its latest read; a day is all a count
-- looks back, so the upkeep forgets older rows.
CREATE TABLE agent_unverified_reads (
    agent_id   TEXT NOT NULL,
    receipt_id TEXT NOT NULL,
    read_at    INTEGER NOT NULL,
    PRIMARY KEY (agent_id, receipt_id)
) WITHOUT ROWID;
CREATE INDEX agent_unverified_reads_by_time ON agent_unverified_reads (read_at);

-- The count, taken at submission: NULL for a person's send and for a draft.
ALTER TABLE sends ADD COLUMN writer_unverified_reads INTEGER;

-- Sends submitted before this keep the count they were shown with (before the
-- trigger below holds a sealed send's count to what its approver saw).
UPDATE sends SET writer_unverified_reads =
    (SELECT count(DISTINCT r.id) FROM audit_entries a JOIN receipts r ON r.id = a.object OR r.thread_id = a.object
      WHERE a.actor = sends.author AND a.action IN ('get_message_body', 'get_thread') AND a.outcome = 'ok'
        AND a.at <= sends.submitted_at AND a.at >= sends.submitted_at - 86400000
        AND r.sender_authentication != 'authenticated')
  WHERE author LIKE 'agt!_%' ESCAPE '!' AND submitted_at IS NOT NULL;

-- What an approver saw is part of what a sealed send was approved as.
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

-- And what agents read in the last day counts toward what they submit next.
INSERT INTO agent_unverified_reads (agent_id, receipt_id, read_at)
  SELECT a.actor, r.id, max(a.at) FROM audit_entries a JOIN receipts r ON r.id = a.object OR r.thread_id = a.object
   WHERE a.actor LIKE 'agt!_%' ESCAPE '!' AND a.action IN ('get_message_body', 'get_thread') AND a.outcome = 'ok'
     AND a.at >= CAST(strftime('%s', 'now') AS INTEGER) * 1000 - 86400000
     AND r.sender_authentication != 'authenticated'
   GROUP BY a.actor, r.id;

-- The chain's index by actor served only the count at every read; every entry
-- appended paid for it.
DROP INDEX audit_entries_by_actor;
