//! What can go wrong with a send or a request about one, and the refusal that
//! says so to the caller.

use mailroom_contract::api::SendState;
use mailroom_contract::api::limits::{OUTBOUND_ATTACHMENT_BYTES, OUTBOUND_ATTACHMENTS, OUTBOUND_MESSAGE_BYTES};

use super::limits::{MAXIMUM_DRAFT_RECIPIENTS, MAXIMUM_RECIPIENTS};
use crate::core::refusal::Refusal;
use crate::mail::outbound::base64_lines_len;

/// What can be wrong with a send or a request about one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendError {
    /// No send with this id in this mailbox that the caller may see.
    NoSuchSend { id: String },
    /// The message replied to is not in this mailbox, or not visible.
    NoSuchReplyTarget { id: String },
    /// A recipient is not an address.
    InvalidRecipient { address: String },
    /// No To recipient, or more recipients than even a draft may hold.
    RecipientCount,
    /// Submitted with more recipients than a send may have.
    TooManyRecipients { count: usize },
    /// The subject is empty, too long, or spans lines.
    InvalidSubject,
    /// The body is too long.
    TextTooLong,
    /// Submitted with no text.
    EmptyText,
    /// The send has no file at this index.
    NoSuchFile { index: String },
    /// A file's name, content type or bytes cannot be used; `field` says which.
    InvalidFile { field: &'static str },
    /// A file is bigger than one send may carry.
    FileTooLarge,
    /// The file would take the send past its count of files.
    TooManyFiles,
    /// The message the send leaves as would take `size` bytes as written, more
    /// than `OUTBOUND_MESSAGE_BYTES`: found at `step`.
    MessageTooLarge { size: usize, step: Oversized },
    /// The send is not in the state this needs.
    WrongState { state: SendState, needs: SendState },
    /// The caller is not the draft's author or the submission's submitter.
    NotYours,
    /// The caller submitted this send, so cannot be its second person.
    OwnSubmission,
    /// An agent tried to decide; it acts as its sponsor and is never a second person.
    AgentsCannotDecide,
    /// The caller minted the agent that submitted the send, or handed it its
    /// credential, so may hold that credential: never its second person.
    HandedTheAgent,
    /// The author no longer holds send.propose on the mailbox at sealing.
    AuthorLostAuthority { author: String },
    /// A refusal needs a reason.
    InvalidReason,
    /// The send is no longer the version the decider was shown: taken back,
    /// changed or submitted again since. `changes` says what, when the version
    /// named is one this send had.
    Changed { changes: Option<Vec<&'static str>> },
    /// Another decision or edit got there first.
    Raced,
    /// A sealed send's row no longer hashes to the manifest recorded when it was
    /// sealed (changed outside the node), or was sealed before the node kept what
    /// rebuilding it needs: it cannot be sent again as approved.
    NotAsApproved { id: String },
}

/// Where a message too big to leave was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Oversized {
    /// Attaching a file; `room` is the biggest file the message still has room for.
    Attaching { room: usize },
    /// Submitting the draft: its text can have grown since its files were attached.
    Submitting,
    /// Approving it: what was submitted before the limit was checked, or a
    /// message grown since by its sender's name.
    Approving,
}

impl Oversized {
    /// Attaching a file of `file_size` bytes that would make the message take
    /// `size` bytes as written: with the room left for the file's base64 (the
    /// message without it, the file's own headers counted), the biggest file
    /// that fits in it.
    pub fn attaching(size: usize, file_size: usize) -> Oversized {
        let room = OUTBOUND_MESSAGE_BYTES.saturating_sub(size.saturating_sub(base64_lines_len(file_size)));
        // A file's base64 grows with it, so the biggest that fits is found by halving.
        let (mut fits, mut too_big) = (0, room + 1);
        while too_big - fits > 1 {
            let middle = fits + (too_big - fits) / 2;
            if base64_lines_len(middle) <= room {
                fits = middle;
            } else {
                too_big = middle;
            }
        }
        Oversized::Attaching { room: fits }
    }
}

/// `number` with its thousands grouped by commas, as the refusals write sizes.
fn grouped(number: usize) -> String {
    let digits = number.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

impl From<SendError> for Refusal {
    fn from(error: SendError) -> Refusal {
        match error {
            SendError::NoSuchSend { id } => Refusal::not_found("send", &id),
            SendError::NoSuchReplyTarget { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no message {id} to reply to in this mailbox."),
                "A reply must answer a message this mailbox received and that you can see.",
                "Use a message id from list_messages for this mailbox, or leave `reply_to` out.",
            ),
            SendError::InvalidRecipient { address } => Refusal::new(
                400,
                "invalid_recipient",
                format!("`{address}` is not an address mail can be sent to."),
                "Each recipient is one address, optionally after a display name in angle brackets; a name may not hold quotes, angle brackets or line breaks.",
                "Send recipients such as ana@example.com or Ana Lima <ana@example.com>, one per list entry.",
            ),
            SendError::RecipientCount => Refusal::new(
                400,
                "recipient_count",
                format!(
                    "A draft needs at least one To recipient, and holds at most {MAXIMUM_DRAFT_RECIPIENTS} recipients in all."
                ),
                format!(
                    "Mail without a recipient goes nowhere; very wide sends are not what a shared mailbox is for: a send goes to at most {MAXIMUM_RECIPIENTS}."
                ),
                format!("Name between 1 and {MAXIMUM_RECIPIENTS} recipients across `to` and `cc`."),
            ),
            SendError::TooManyRecipients { count } => Refusal::new(
                409,
                "too_many_recipients",
                format!("This draft has {count} recipients, so it was not submitted."),
                format!(
                    "A send goes to at most {MAXIMUM_RECIPIENTS} recipients across To and Cc; a draft may hold more while its writer chooses whom to keep."
                ),
                format!(
                    "Remove {} of its recipients with update_draft (`to` and `cc`), then submit it again.",
                    count.saturating_sub(MAXIMUM_RECIPIENTS)
                ),
            ),
            SendError::InvalidSubject => Refusal::new(
                400,
                "invalid_subject",
                "That subject cannot be sent.",
                "A subject is one line of 1 to 998 characters, with no line breaks.",
                "Send a single-line subject.",
            ),
            SendError::TextTooLong => Refusal::new(
                400,
                "text_too_long",
                "The message text is too long.",
                "A send's text may have at most 256 KiB.",
                "Shorten the text.",
            ),
            SendError::NoSuchFile { index } => Refusal::new(
                404,
                "not_found",
                format!("This send has no file {index}."),
                "Files are numbered from 0, in the order the send lists them.",
                "Use an `index` from the send's `attachments`.",
            ),
            SendError::InvalidFile { field } => Refusal::new(
                400,
                "invalid_attachment",
                format!("The file's `{field}` cannot be used."),
                match field {
                    "name" => {
                        "A file name is some text of at most 255 characters, without slashes, quotes or line breaks."
                    }
                    "content_type" => "A content type is `type/subtype`, such as application/pdf.",
                    _ => "The file's bytes must be base64 (the standard alphabet, with padding).",
                },
                "Send the file again with that field corrected.",
            ),
            SendError::FileTooLarge => Refusal::new(
                400,
                "attachment_too_large",
                "The file is too large to attach.",
                format!(
                    "A file may have at most {} KiB (decoded): it travels base64-encoded in a request of at most 1 MiB.",
                    OUTBOUND_ATTACHMENT_BYTES / 1024
                ),
                "Attach a smaller file, or share a link to it in the text.",
            ),
            SendError::TooManyFiles => Refusal::new(
                409,
                "too_many_attachments",
                "The send cannot carry another file.",
                format!("A send carries at most {OUTBOUND_ATTACHMENTS} files."),
                "Remove a file with remove_send_attachment, or send the rest in another message.",
            ),
            SendError::MessageTooLarge { size, step } => {
                let over = size.saturating_sub(OUTBOUND_MESSAGE_BYTES);
                Refusal::new(
                    409,
                    "message_too_large",
                    match step {
                        Oversized::Attaching { .. } => format!(
                            "With this file (`content_base64`) the message would take {} bytes as written, {} more than one message may, so it was not attached.",
                            grouped(size),
                            grouped(over)
                        ),
                        Oversized::Submitting => format!(
                            "This draft's message, its `text` and its `attachments`, would take {} bytes as written, {} more than one message may, so it was not submitted.",
                            grouped(size),
                            grouped(over)
                        ),
                        Oversized::Approving => format!(
                            "This send's message would take {} bytes as written, {} more than one message may, so it was not sealed or sent.",
                            grouped(size),
                            grouped(over)
                        ),
                    },
                    format!(
                        "The Email Service takes a message of at most {} bytes ({} MiB) as written: its header, its text and each file in base64, which takes 4 bytes for every 3 a file holds.",
                        grouped(OUTBOUND_MESSAGE_BYTES),
                        OUTBOUND_MESSAGE_BYTES / (1024 * 1024)
                    ),
                    match step {
                        Oversized::Attaching { room: 0 } => "This send has no room for another file: remove one with remove_send_attachment, or share a link to the file in the text.".to_string(),
                        Oversized::Attaching { room } => format!(
                            "Attach a file of at most {} bytes, which is the room left; or remove a file with remove_send_attachment, or share a link to this one in the text.",
                            grouped(room)
                        ),
                        Oversized::Submitting => format!(
                            "Make it {} bytes smaller as written (a file counts a third more than it holds): remove a file with remove_send_attachment or shorten the text with update_draft, then submit it again.",
                            grouped(over)
                        ),
                        Oversized::Approving => "Refuse it with refuse_send, saying why, so its author can write it again smaller; nothing was sealed.".to_string(),
                    },
                )
            }
            SendError::EmptyText => Refusal::new(
                400,
                "empty_text",
                "The send has no text, so it was not submitted.",
                "A message is only put before a second person with something to say; a draft may be empty until then.",
                "Write the reply's text with update_draft, then submit it again.",
            ),
            SendError::WrongState { state, needs } => Refusal::new(
                409,
                "wrong_state",
                format!("This send is {}, and this needs it to be {}.", state.name(), needs.name()),
                match needs {
                    SendState::Draft => "Only a draft can be edited, deleted or submitted.",
                    SendState::Failed => {
                        "Only a send whose dispatch failed can be sent again; a dispatched one has reached everyone, and one still sealed is being handed over."
                    }
                    _ => "Only a submitted send can be cancelled, approved or refused.",
                },
                "Get the send to see its state; cancel a submission to edit it again.",
            ),
            SendError::NotAsApproved { id } => Refusal::new(
                409,
                "not_as_approved",
                format!("Send {id} cannot be sent again as it was approved."),
                "What leaves is rebuilt from the stored send, and the stored send no longer hashes to the manifest recorded when it was sealed (or was sealed before the node kept the sender it was sealed with).",
                "Do not send it: verify the audit chain (GET /api/audit/verify), then draft it again for a new approval.",
            ),
            SendError::NotYours => Refusal::new(
                403,
                "not_yours",
                "Only the person or agent who wrote this draft, or submitted it, can do that.",
                "Drafts and submissions are their author's until a second person decides.",
                "Ask the author, or draft your own.",
            ),
            SendError::OwnSubmission => Refusal::new(
                403,
                "own_submission",
                "You submitted this send, so you cannot be the one to decide on it.",
                "Dual control needs a second person: the submitter never approves their own send.",
                "Ask another person who holds approval.decide on this mailbox to approve or refuse it; to change it yourself, cancel the submission.",
            ),
            SendError::HandedTheAgent => Refusal::new(
                403,
                "handed_the_agent",
                "You minted or paired the agent that submitted this send, so you cannot be the one to decide on it.",
                "Whoever handed an agent its credential may still hold it: approving what it submitted would make you both people dual control needs.",
                "Ask another person who holds approval.decide on this mailbox to approve or refuse it.",
            ),
            SendError::AgentsCannotDecide => Refusal::new(
                403,
                "agents_cannot_decide",
                "An agent cannot approve or refuse a send.",
                "An agent acts under its sponsor's authority, so it can never be the second person dual control needs.",
                "Ask a person who holds approval.decide on this mailbox to decide.",
            ),
            SendError::AuthorLostAuthority { author } => Refusal::new(
                409,
                "author_lost_authority",
                "This send cannot be sealed: its author no longer holds send.propose on the mailbox.",
                format!(
                    "{author} lost send.propose after submitting; a send is sealed only while its author may still propose it."
                ),
                "Refuse it, or ask an administrator to grant send.propose to the author again.",
            ),
            SendError::InvalidReason => Refusal::new(
                400,
                "invalid_reason",
                "A refusal needs a reason.",
                "The reason tells the submitter why; it has 1 to 1,000 characters.",
                "Send `{\"reason\": \"…\"}`.",
            ),
            SendError::Changed { changes } => Refusal::new(
                409,
                "send_changed",
                match changes {
                    Some(changes) => format!("This send changed after you were shown it: {}.", changes.join(", ")),
                    None => "This send is not the version you named.".to_string(),
                },
                "A decision is bound to the version its decider read; a send taken back, edited or submitted again is a new version, and deciding on an older one would seal words nobody approved.",
                "Get the send again, read it as it now stands, and decide on its current `version`.",
            ),
            SendError::Raced => Refusal::new(
                409,
                "raced",
                "Someone else changed this send a moment ago.",
                "Another request edited, submitted or decided it between your read and your change.",
                "Get the send again and decide from its current state.",
            ),
        }
    }
}
