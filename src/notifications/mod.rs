//! The notifications feed: per person, what needs them or what they are waiting
//! to hear, each read or unread for them alone.
//!
//! Other domains write a notification in the same batch as the change it tells
//! of (`notify`, `resolve`), so a notification exists exactly when its cause
//! does. One is addressed either to a person (a send's writer, a conversation's
//! new assignee, a reminder's owner) or to an audience read when the feed is:
//! the holders of a relation on a mailbox (approval.decide, for an approval
//! waiting), or on the organisation (org.admin, for an audit chain that failed
//! verification: `audit_alarm`). Reading the feed asks the relation table
//! through `authz::tuples`, so an agent reading its sponsor's feed sees mail
//! notifications only where it and its sponsor both hold a relation (the
//! intersection every predicate carries), and never an administrators' alarm;
//! what concerns the person alone (a reminder due) it sees with the feed itself.
//!
//! Beneath this file, which only declares and re-exports: `notice` (what a
//! notification says and whom it is for), `writes` (what other domains write
//! in their own batches), `feed` (the routes), `errors` and `store` (every
//! statement, and the row the feed reads).

mod errors;
mod feed;
mod notice;
mod store;
mod writes;

pub use errors::NotificationError;
pub use feed::{list, mark_read, mark_unread};
pub use notice::{Addressee, Notice};
pub use writes::{
    AlarmedDatabase, DatabaseFullness, audit_alarm, database_alarm, not_yet_written, notify, notify_once,
    remove_expired, resolve,
};
