//! Outbound mail under dual control: drafts, submission, a second person's
//! decision, sealing and dispatch.
//!
//! draft → submitted → sealed → dispatched | failed, or submitted → refused;
//! cancel takes a submission back to a draft, and retry a failed send back to
//! sealed and on to the recipients it has not reached (decision 0010). Drafts
//! are their author's alone; everything after is visible to the mailbox's
//! proposers and deciders. Approval
//! is the governed step: a second person who holds `approval.decide`, never the
//! submitter, never an agent. At approval the send is sealed (the manifest's hash
//! goes into the audit chain, and a trigger makes the row immutable), the author's
//! `send.propose` is checked again inside the same transaction, and only then is
//! the message handed to the mail binding.
//!
//! A decision names the version its decider was shown (`version`): a submission
//! replaced since is refused, naming what changed, never sealed unseen.
//!
//! `record` is a send as stored and answered, and the reads of sends; `drafts`
//! the author's side (draft, edit, delete, submit, cancel); `decisions` the
//! second person's side and what follows it (approve and seal, refuse, dispatch,
//! send a failed send again); `errors` what can go wrong and the refusals that
//! say so, `limits` how much a send may hold, and `store` every statement
//! about sends.

mod decisions;
mod drafts;
mod errors;
mod files;
mod limits;
mod record;
mod store;
mod version;

pub use decisions::{approve, refuse, retry};
pub use drafts::{
    ButlerReply, ButlerSubmission, butler_reply_unwritable, cancel, create_draft, delete_draft, redraft, submit,
    submitted_for_butler, update_draft,
};
pub use errors::SendError;
pub use files::{add as add_attachment, download as download_attachment, remove as remove_attachment};
pub use limits::{MAXIMUM_DRAFT_RECIPIENTS, MAXIMUM_RECIPIENTS, MAXIMUM_SUBJECT_CHARACTERS, MAXIMUM_TEXT_BYTES};
pub use record::{UnnamedSends, approvals, get, in_thread, list};
