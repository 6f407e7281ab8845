-- Snoozed conversations (decision 0048), as in D1 (migration 0041): when a
-- conversation wakes, on its own row. The index of wake-ups stays in D1.
ALTER TABLE mail_threads ADD COLUMN snoozed_until INTEGER;
