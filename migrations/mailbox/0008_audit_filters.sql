-- The mailbox's segment of the audit trail read narrowed (GET /api/audit with
-- `mailbox_id` and `actor`, `action`, `since` or `until`), by the same indexes
-- as the organisation's chain in D1 (migration 0038): a page costs the same
-- however long the segment grows.
CREATE INDEX audit_entries_by_actor_seq ON audit_entries (actor, seq);
CREATE INDEX audit_entries_by_action_seq ON audit_entries (action, seq);
CREATE INDEX audit_entries_by_time ON audit_entries (at, seq);
