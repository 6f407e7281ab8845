//! Mail: mailboxes (`mailboxes`), received messages (`inbound` reads them,
//! `receiving` stores them,
//! `boundaries` hands mail-parser their parts as RFC 2046 delimits them,
//! `trust` reads how far their senders were authenticated and fences their text
//! for agents, `threads` groups them with sent mail into conversations,
//! the `mailroom-html-text` crate renders an HTML-only one's text, `limits` says how much of them
//! it keeps and serves, `messages` reads them,
//! `search` finds them (and selects what an eDiscovery export copies), `deletion`
//! deletes them) and outbound mail under dual
//! control (`sends`, with `outbound` writing the sealed message), each with its
//! routes, its errors and their refusals; `message_ids` is the Message-ID syntax
//! both directions hold to; `moving` copies a mailbox's mail out of D1 into its
//! own database and verifies the copy, `location` reads a mailbox's mail
//! where it is, D1 or that database, and `names` reads from the directory the
//! names of the people and agents it mentions (decision 0040);
//! `originals` keys each mailbox's copy of a message's bytes in the object
//! store; `unverified_reads` notes what agents read of mail from unauthenticated
//! senders, for the approver of what they then write; `image_senders` keeps
//! each person's senders whose remote images they always see; `replies`
//! keeps a mailbox's saved replies and `signatures` a mailbox's and a
//! person's signature (decision 0045).
//!
//! Other domains and the surfaces reach this one through the items re-exported
//! here.

mod boundaries;
pub mod butlers;
pub mod deletion;
pub mod headers;
pub mod image_senders;
pub mod inbound;
pub mod limits;
pub mod location;
pub mod mailboxes;
pub mod message_ids;
pub mod messages;
pub mod moving;
pub mod names;
pub mod originals;
pub mod outbound;
pub mod receiving;
pub mod replies;
pub mod search;
pub mod sends;
pub mod signatures;
mod store;
pub mod threads;
pub mod trust;
pub mod unverified_reads;

pub use deletion::{delete_originals_owed, owe_deletion_of};
pub use inbound::{Delivery, Rejection};
pub use mailboxes::{mailboxes_among, present_all as present_mailboxes};
pub use receiving::{Received, receive};
pub use search::{MAXIMUM_QUERY_LENGTH, MAXIMUM_TERMS, ReceiptSelection, SelectedIn, fts_query};
