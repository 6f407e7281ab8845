-- Reminders (SPEC §9): each person's inbox of things that fall due, the sources
-- that push into it, and what the scheduled run delivered through each channel.

-- A person's zone, quiet hours and channels. A person without a row has the
-- defaults: UTC, no quiet hours, no channel.
CREATE TABLE reminder_profiles (
    person_id      TEXT PRIMARY KEY REFERENCES people (id),
    time_zone      TEXT NOT NULL DEFAULT 'UTC',           -- IANA name
    quiet_start    TEXT,                                  -- HH:MM local; both or neither
    quiet_end      TEXT,
    email_channel  INTEGER NOT NULL DEFAULT 0 CHECK (email_channel IN (0, 1)),
    webhook_url    TEXT,
    webhook_secret TEXT,                                  -- signs each delivery; shown once
    updated_at     INTEGER NOT NULL,
    CHECK ((quiet_start IS NULL) = (quiet_end IS NULL)),
    CHECK ((webhook_url IS NULL) = (webhook_secret IS NULL))
);

-- Services that push events for people, each with a credential shown once.
CREATE TABLE reminder_sources (
    id              TEXT PRIMARY KEY,                     -- src_…
    name            TEXT NOT NULL UNIQUE,
    credential_hash TEXT NOT NULL UNIQUE,                 -- SHA-256 of the mr_src_ credential
    created_at      INTEGER NOT NULL,
    created_by      TEXT NOT NULL,
    revoked_at      INTEGER
);

-- The events. `source_id` is a source's id or 'manual' (added by the person or
-- by an agent of theirs). The three moments are computed in the person's zone
-- when the event or the zone is written, so a state is a comparison with now:
-- scheduled before `fire_moment`, preparing from it, today from `day_moment`,
-- past due from `due_moment` (overdue, or expired when `after_due` is expire).
CREATE TABLE reminder_events (
    id          TEXT PRIMARY KEY,                          -- evt_…
    person_id   TEXT NOT NULL REFERENCES people (id),
    source_id   TEXT NOT NULL,
    source_ref  TEXT NOT NULL,
    topic       TEXT NOT NULL DEFAULT '',
    title       TEXT NOT NULL,
    subtitle    TEXT,
    due_at      TEXT NOT NULL,                             -- as given, in one of the three forms
    fire_at     TEXT NOT NULL,                             -- YYYY-MM-DD
    after_due   TEXT NOT NULL CHECK (after_due IN ('keep', 'expire')),
    done_label  TEXT NOT NULL,
    deep_link   TEXT,
    fire_moment INTEGER NOT NULL,
    day_moment  INTEGER NOT NULL,
    due_moment  INTEGER NOT NULL,
    quiet_until INTEGER,                                   -- acknowledged: silent until then
    closed_as   TEXT CHECK (closed_as IN ('done', 'withdrawn', 'expired')),
    closed_at   INTEGER,
    created_by  TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    CHECK ((closed_as IS NULL) = (closed_at IS NULL)),
    UNIQUE (person_id, source_id, source_ref, topic)
);
CREATE INDEX reminder_events_open ON reminder_events (person_id, due_moment) WHERE closed_as IS NULL;
CREATE INDEX reminder_events_closed ON reminder_events (person_id, closed_at) WHERE closed_as IS NOT NULL;
CREATE INDEX reminder_events_falling_due ON reminder_events (fire_moment) WHERE closed_as IS NULL;

-- One row per event, checkpoint and channel: what the scheduled run delivered.
-- The key makes a checkpoint's notification go out once per channel; a failed
-- one is tried again by the next run.
CREATE TABLE reminder_deliveries (
    event_id      TEXT NOT NULL REFERENCES reminder_events (id),
    checkpoint    INTEGER NOT NULL,                        -- the moment the state began
    state_entered TEXT NOT NULL,                           -- preparing, today or overdue
    channel       TEXT NOT NULL CHECK (channel IN ('webhook', 'email')),
    outcome       TEXT NOT NULL CHECK (outcome IN ('sending', 'delivered', 'failed')),
    attempts      INTEGER NOT NULL DEFAULT 1,
    last_error    TEXT,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (event_id, checkpoint, channel)
);
