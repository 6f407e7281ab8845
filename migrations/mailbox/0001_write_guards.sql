-- A mailbox's own database (a SQLite-backed Durable Object, decision 0040).
-- Migrations here are applied by the object itself on its first request after
-- a deployment, in file-name order, and by the native twin from the same
-- files; `migrations/` (one directory up) is D1's alone.
--
-- The write guards a store's batch may carry, as on D1 (migration 0002): a
-- guard inserts a row only when its condition fails, and its slot's CHECK
-- refuses that row, so the whole batch rolls back naming the slot.
CREATE TABLE write_guards (
    slot_1 INTEGER CONSTRAINT write_guard_1 CHECK (slot_1 IS NULL),
    slot_2 INTEGER CONSTRAINT write_guard_2 CHECK (slot_2 IS NULL),
    slot_3 INTEGER CONSTRAINT write_guard_3 CHECK (slot_3 IS NULL),
    slot_4 INTEGER CONSTRAINT write_guard_4 CHECK (slot_4 IS NULL),
    slot_5 INTEGER CONSTRAINT write_guard_5 CHECK (slot_5 IS NULL),
    slot_6 INTEGER CONSTRAINT write_guard_6 CHECK (slot_6 IS NULL),
    slot_7 INTEGER CONSTRAINT write_guard_7 CHECK (slot_7 IS NULL),
    slot_8 INTEGER CONSTRAINT write_guard_8 CHECK (slot_8 IS NULL)
);
