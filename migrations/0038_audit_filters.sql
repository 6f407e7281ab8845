-- The audit trail read narrowed (GET /api/audit's `actor`, `action`, `since`,
-- `until`): each narrowing walks its own index newest first, so a page costs
-- the same however long the trail grows, instead of a walk over every entry.
CREATE INDEX audit_entries_by_actor_seq ON audit_entries (actor, seq);
CREATE INDEX audit_entries_by_action_seq ON audit_entries (action, seq);
CREATE INDEX audit_entries_by_time ON audit_entries (at, seq);
