-- eDiscovery exports (issue 15): a requester's selection of received mail,
-- fixed when it is requested, copied into the object store in the background
-- (a run of the per-minute schedule at a time, so it resumes wherever it
-- stopped), with a manifest whose SHA-256 goes into the audit chain.
CREATE TABLE exports (
  id TEXT PRIMARY KEY,            -- exp_ + ULID
  requester TEXT NOT NULL,        -- the only one who can read it
  mailbox_ids_json TEXT NOT NULL, -- ["mbx_…", …]
  query TEXT,
  since TEXT,                     -- YYYY-MM-DD
  until TEXT,                     -- YYYY-MM-DD
  state TEXT NOT NULL CHECK (state IN ('building', 'ready')),
  messages_total INTEGER NOT NULL,
  manifest_sha256 TEXT,
  created_at INTEGER NOT NULL,
  completed_at INTEGER
);
CREATE INDEX exports_by_requester ON exports (requester, id);
CREATE INDEX exports_building ON exports (state, id) WHERE state = 'building';

-- The messages an export selected, in the order the manifest lists them. A
-- copied one has its size and hash; one deleted before it could be copied is
-- marked missing. The receipt's facts are kept here, so a later deletion of the
-- mail does not change what the manifest says was selected.
CREATE TABLE export_items (
  export_id TEXT NOT NULL REFERENCES exports (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  receipt_id TEXT NOT NULL,
  mailbox_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  raw_key TEXT NOT NULL,
  size INTEGER,
  sha256 TEXT,
  missing INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (export_id, position)
) WITHOUT ROWID;
CREATE UNIQUE INDEX export_items_by_receipt ON export_items (export_id, receipt_id);
