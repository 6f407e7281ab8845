-- Receipts by when they were received: the index D1's migration 0034 adds,
-- and why, so the two schemas stay one.
CREATE INDEX receipts_by_time ON receipts (received_at);
