-- The notifications feed (issue 15): per person, what needs them or what they
-- wait to hear. A notification is addressed either to one person (`person_id`:
-- a send's writer, a conversation's new assignee, a reminder's owner) or to an
-- audience read when the feed is (`audience`, a relation on `mailbox_id`: every
-- holder of approval.decide there), so whoever gains or loses that relation
-- later sees the feed change with it, agents intersected with their sponsor.
CREATE TABLE notifications (
  id TEXT PRIMARY KEY,            -- ntf_ + ULID: sorts by when it happened
  at INTEGER NOT NULL,
  kind TEXT NOT NULL,
  person_id TEXT,
  audience TEXT,
  mailbox_id TEXT,
  object_id TEXT NOT NULL,        -- the send, conversation or reminder it is about
  actor TEXT,                     -- who caused it, where someone did
  title TEXT NOT NULL,
  detail TEXT,
  resolved_at INTEGER,            -- what it asked for needs nobody any more
  dedupe_key TEXT UNIQUE,         -- at most one notification per key (a reminder's checkpoint)
  CHECK ((person_id IS NULL) <> (audience IS NULL)),
  CHECK (audience IS NULL OR mailbox_id IS NOT NULL)
);
CREATE INDEX notifications_by_person ON notifications (person_id, id) WHERE person_id IS NOT NULL;
CREATE INDEX notifications_by_audience ON notifications (audience, mailbox_id, id) WHERE audience IS NOT NULL;
CREATE INDEX notifications_by_object ON notifications (object_id, kind);
CREATE INDEX notifications_by_age ON notifications (at);

-- Read state, per notification and person (an agent marks its sponsor's).
CREATE TABLE notification_reads (
  notification_id TEXT NOT NULL,
  person_id TEXT NOT NULL,
  read_at INTEGER NOT NULL,
  PRIMARY KEY (notification_id, person_id)
) WITHOUT ROWID;
