-- Receipts by when they were received (decision 0040). A search across
-- mailboxes now merges what several stores answer (D1 and mailboxes' own
-- databases) in one order, by time, so the page after a cursor starts, in a
-- store that does not hold the cursor's receipt, where that store's receipts
-- reach the cursor's time. A receipt's time never falls behind the one stored
-- before it (decision 0014), so this index finds that place in storage order
-- without visiting the newer receipts.
CREATE INDEX receipts_by_time ON receipts (received_at);
