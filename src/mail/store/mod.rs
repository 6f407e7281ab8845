//! Mail's own SQL for received mail and mailboxes: the receipt a delivery
//! writes and what it reads first (`inbound`), the mailboxes (`mailboxes`),
//! reading received mail (`messages`), searching it and selecting what an
//! export copies (`search`), deleting it (`deletion`), and moving a
//! mailbox's mail out of D1 into its own database (`moving`), and the names
//! of the people and agents mail mentions by id (`names`), and what agents
//! read of mail from unauthenticated senders (`unverified_reads`), and the
//! senders whose images each person always sees (`image_senders`), and
//! saved replies and signatures (`replies`), and conversations' internal
//! notes (`notes`). The
//! sub-domains with more of their own (`threads`, `sends`, `butlers`) keep
//! theirs beside them. Private to mail: other domains reach these tables
//! through mail's re-exported functions.

pub(super) mod deletion;
pub(super) mod image_senders;
pub(super) mod inbound;
pub(super) mod mailboxes;
pub(super) mod messages;
pub(super) mod moving;
pub(super) mod names;
pub(super) mod notes;
pub(super) mod replies;
pub(super) mod search;
pub(super) mod unverified_reads;
