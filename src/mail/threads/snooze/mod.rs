//! Snoozing a conversation (decision 0048): a conversation keeps its status
//! and says when it wakes (`snoozed_until`, the same column in D1 and in a
//! mailbox's own database); the list leaves it out until then. `change` reads
//! and keeps what the update route asks, `wake` is the minute's job that
//! opens it again at its moment and tells its assignee, and `store` spells
//! the SQL of both.

pub(super) mod change;
pub(super) mod store;
pub(super) mod wake;
