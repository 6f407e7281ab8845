//! Reminders: a person's inbox of things that fall due (SPEC §9); so far only `schedule`, their time logic.

pub mod schedule;
