-- A reminder delivery's claim names the run that holds it and until when
-- (decision 0028): a run starts a delivery only while its claim outlasts the
-- delivery's own deadline, and records or gives back only what it still holds,
-- so a run that outlives its claim never posts what another run took over. A
-- failed delivery waits before its next attempt, twice as long after each.
ALTER TABLE reminder_deliveries ADD COLUMN claimed_by TEXT;
ALTER TABLE reminder_deliveries ADD COLUMN lease_expires_at INTEGER;
ALTER TABLE reminder_deliveries ADD COLUMN next_attempt_at INTEGER;

-- Claims taken before: held two minutes from when they were taken, as they were.
UPDATE reminder_deliveries SET lease_expires_at = updated_at + 120000 WHERE outcome = 'sending';
-- Failures recorded before: due again at once, as they were, unless their ten
-- attempts are spent.
UPDATE reminder_deliveries SET next_attempt_at = updated_at WHERE outcome = 'failed' AND attempts < 10;
