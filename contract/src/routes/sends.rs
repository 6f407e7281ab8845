//! Sends: drafts, their attachments, submitting, cancelling and retrying, and the
//! approvals a held send waits for.

use crate::api::{
    AddAttachment, ApprovalQueue, ApproveSend, CreateDraft, RefuseSend, Send, SendList, SendState, UpdateDraft,
};
use crate::relation::Relation;
use crate::route::Method::{Delete, Get, Patch, Post};
use crate::route::{Authority, Parameter, PathParameter, Produces, Refuses, Route, Tier};
use crate::route_id::RouteId;

use super::shared::{CURSOR, LIMIT, on_mailbox, on_mailbox_any};

/// Whoever works on a mailbox's sends: proposes them, or decides on them.
const WORKS_ON_SENDS: &[Relation] = &[Relation::SendPropose, Relation::ApprovalDecide];

pub(super) fn list_sends() -> Route {
    Route::new(RouteId::ListSends, Get, "/api/mailboxes/:mailboxId/sends", "list_sends")
        .summary("List a mailbox's outbound mail")
        .description("Lists a mailbox's sends, newest first, a page at a time: the caller's own drafts, and every send submitted from it, whatever became of it (`state` filters by where they stand). Use it to follow what happened to a send; follow `next_cursor` to page back in time.")
        .path_parameters(&[PathParameter::MailboxId])
        .query_parameters(const { &[
            Parameter::one_of("state", "Only sends in this state.", SendState::NAMES),
            LIMIT,
            CURSOR,
        ] })
        .response::<SendList>()
        .authority(on_mailbox_any(WORKS_ON_SENDS))
}

pub(super) fn create_draft() -> Route {
    Route::new(RouteId::CreateDraft, Post, "/api/mailboxes/:mailboxId/sends", "create_draft")
        .summary("Draft a message")
        .description("Starts a draft from this mailbox, new or in reply to a received message (`reply_to`): a reply joins that message's conversation and carries its In-Reply-To and References headers (RFC 5322 §3.6.4), and whatever it leaves out is filled as a mail client would (recipients from Reply-To, unless that is this mailbox, or the sender; everyone else too with `reply_all`; `Re:` and the subject). A reply to all of a message with more recipients than a send may have is kept as a draft with all of them, and says how many to remove (`recipients_to_remove`) before it can be submitted. Asking again for a reply with nothing of its own resumes the caller's draft already open in that conversation. To quote the message, read it and write the quote into `text`. Nothing is sent: submit it for a second person's approval with submit_send.")
        .path_parameters(&[PathParameter::MailboxId])
        .request::<CreateDraft>()
        .response::<Send>()
        .created()
        .tier(Tier::Act)
        .refuses(const { &[
            Refuses::NotFound("`reply_to` names no message received by this mailbox."),
        ] })
        .authority(on_mailbox(&[Relation::SendPropose]))
}

pub(super) fn get_send() -> Route {
    Route::new(RouteId::GetSend, Get, "/api/mailboxes/:mailboxId/sends/:sendId", "get_send")
        .summary("Show a send")
        .description("Returns one send: where it stands in dual control (its `state`), who wrote, submitted and decided it, and why it was refused or failed.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::SendId])
        .response::<Send>()
        .authority(on_mailbox_any(WORKS_ON_SENDS))
}

pub(super) fn update_draft() -> Route {
    Route::new(RouteId::UpdateDraft, Patch, "/api/mailboxes/:mailboxId/sends/:sendId", "update_draft")
        .summary("Edit a draft")
        .description("Changes a draft's recipients, subject or text. Only its author can edit it, and only while it is a draft (cancel a submission to edit it again).")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::SendId])
        .request::<UpdateDraft>()
        .response::<Send>()
        .tier(Tier::Act)
        .refuses(const { &[
            Refuses::Forbidden("Only the draft's author can."),
            Refuses::Conflict("The send is no longer a draft, or another change to it won a race."),
        ] })
        .authority(on_mailbox(&[Relation::SendPropose]))
}

pub(super) fn delete_draft() -> Route {
    Route::new(RouteId::DeleteDraft, Delete, "/api/mailboxes/:mailboxId/sends/:sendId", "delete_draft")
        .summary("Delete a draft")
        .description("Deletes a draft. Only its author can, and only while it is a draft.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::SendId])
        .response::<Send>()
        .tier(Tier::Act)
        .refuses(
            const {
                &[
                    Refuses::Forbidden("Only the draft's author can."),
                    Refuses::Conflict("The send is no longer a draft, or another change to it won a race."),
                ]
            },
        )
        .authority(on_mailbox(&[Relation::SendPropose]))
}

pub(super) fn submit_send() -> Route {
    Route::new(RouteId::SubmitSend, Post, "/api/mailboxes/:mailboxId/sends/:sendId/submit", "submit_send")
        .summary("Submit a draft for approval")
        .description("Submits the caller's draft for approval. A second person who holds approval.decide on the mailbox must approve it before anything is sent; until then cancel_send takes it back. A draft with no text is refused (400 empty_text), and so is one with more recipients than a send may have until it is trimmed with update_draft (409 too_many_recipients; the draft's `recipients_to_remove` says by how many), and one whose message, its files base64-encoded, would be bigger than 5 MiB (409 message_too_large).")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::SendId])
        .response::<Send>()
        .tier(Tier::Act)
        .refuses(const { &[
            Refuses::Forbidden("Only the draft's author can."),
            Refuses::Conflict("The send is no longer a draft, another change to it won a race, it has more recipients than a send may have, or its message would be bigger than one message may be."),
        ] })
        .authority(on_mailbox(&[Relation::SendPropose]))
}

pub(super) fn redraft_send() -> Route {
    Route::new(RouteId::RedraftSend, Post, "/api/mailboxes/:mailboxId/sends/:sendId/redraft", "redraft_send")
        .summary("Write a refused send again")
        .description("Turns a send a second person refused into a new draft for its author: the same recipients, subject, text and conversation, to edit in the light of the refusal's reason and submit again. The refused send stays as it was, with its reason.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::SendId])
        .response::<Send>()
        .created()
        .tier(Tier::Act)
        .refuses(const { &[
            Refuses::Forbidden("Only the send's author can write it again."),
            Refuses::Conflict("The send was not refused."),
        ] })
        .authority(on_mailbox(&[Relation::SendPropose]))
}

pub(super) fn add_send_attachment() -> Route {
    Route::new(RouteId::AddSendAttachment, Post, "/api/mailboxes/:mailboxId/sends/:sendId/attachments", "add_send_attachment")
        .summary("Attach a file to a draft")
        .description("Adds a file to the caller's draft, base64-encoded: at most 700 KiB decoded per file and 10 files per send, and the message they leave in at most 5 MiB as written, each file in base64 taking a third more than it holds (about 3.6 MiB of files beside a short text); a file that would take the message past that is refused (409 message_too_large, saying how big a file still fits). The file is stored in the node's object store, named by its SHA-256, which the version the approver decides on and the sealed manifest both carry; what leaves is checked against it. Answers the draft with its files.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::SendId])
        .request::<AddAttachment>()
        .response::<Send>()
        .created()
        .tier(Tier::Act)
        .refuses(const { &[
            Refuses::Forbidden("Only the draft's author can attach files to it."),
            Refuses::Conflict("The send is no longer a draft, or the file would take it past its count of files or its message past the most one message may take."),
        ] })
        .authority(on_mailbox(&[Relation::SendPropose]))
}

pub(super) fn remove_send_attachment() -> Route {
    Route::new(
        RouteId::RemoveSendAttachment,
        Delete,
        "/api/mailboxes/:mailboxId/sends/:sendId/attachments/:attachmentIndex",
        "remove_send_attachment",
    )
    .summary("Remove a file from a draft")
    .description("Takes a file off the caller's draft; the files after it move up one place. Answers the draft.")
    .path_parameters(&[PathParameter::MailboxId, PathParameter::SendId, PathParameter::AttachmentIndex])
    .response::<Send>()
    .tier(Tier::Act)
    .refuses(
        const {
            &[
                Refuses::Forbidden("Only the draft's author can remove its files."),
                Refuses::Conflict("The send is no longer a draft."),
            ]
        },
    )
    .authority(on_mailbox(&[Relation::SendPropose]))
}

pub(super) fn get_send_attachment() -> Route {
    Route::new(
        RouteId::GetSendAttachment,
        Get,
        "/api/mailboxes/:mailboxId/sends/:sendId/attachments/:attachmentIndex",
        "get_send_attachment",
    )
        .summary("Download a file a send carries")
        .description("Returns one of a send's files with its content type, for its author and for those who decide on the mailbox's sends (an approver opens what they approve). Recorded in the audit chain.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::SendId, PathParameter::AttachmentIndex])
        .produces(Produces::Attachment)
        .authority(on_mailbox_any(WORKS_ON_SENDS))
        .reaches_content()
}

pub(super) fn cancel_send() -> Route {
    Route::new(RouteId::CancelSend, Post, "/api/mailboxes/:mailboxId/sends/:sendId/cancel", "cancel_send")
        .summary("Take back a submission")
        .description("Returns a submitted send to a draft, before anyone has decided on it. Only its submitter can.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::SendId])
        .response::<Send>()
        .tier(Tier::Act)
        .refuses(
            const {
                &[
                    Refuses::Forbidden("Only the send's submitter can take it back."),
                    Refuses::Conflict("The send is not awaiting a decision, or another change to it won a race."),
                ]
            },
        )
        .authority(on_mailbox(&[Relation::SendPropose]))
}

pub(super) fn retry_send() -> Route {
    Route::new(RouteId::RetrySend, Post, "/api/mailboxes/:mailboxId/sends/:sendId/retry", "retry_send")
        .summary("Send a failed send again")
        .description("Hands a send whose dispatch failed to the mail binding again, exactly as it was sealed and approved, and only to the recipients it has not reached, so nobody receives it twice. Nothing about it can change, so it needs no new approval, but its author must still hold send.propose on the mailbox. Answers the send as it now stands: dispatched, or failed again with why.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::SendId])
        .response::<Send>()
        .tier(Tier::Act)
        .refuses(const { &[
            Refuses::Conflict("The send has not failed, what would be sent no longer hashes to what was approved, its author no longer holds send.propose on the mailbox, or another change to it won a race."),
        ] })
        .authority(on_mailbox(&[Relation::SendPropose]))
}

pub(super) fn approve_send() -> Route {
    Route::new(RouteId::ApproveSend, Post, "/api/mailboxes/:mailboxId/sends/:sendId/approve", "approve_send")
        .summary("Approve a send")
        .description("Approves the version of a submitted send the approver was shown, as the second person: it is sealed (made immutable, its manifest hash, which includes the version, written into the audit chain) and handed to the mail binding. A send taken back, changed or submitted again since has a new version, and approving the old one is refused (409 send_changed, naming what changed). The submitter cannot approve their own, nor can whoever minted or paired the agent that submitted it, and an agent never can.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::SendId])
        .request::<ApproveSend>()
        .response::<Send>()
        .tier(Tier::Governed)
        .refuses(const { &[
            Refuses::Forbidden("An agent never decides on a send, and nobody decides on their own submission."),
            Refuses::Conflict("The send is not awaiting a decision, another decision won a race, its author no longer holds send.propose on the mailbox, or its message would be bigger than one message may be."),
        ] })
        .authority(on_mailbox(&[Relation::ApprovalDecide]))
}

pub(super) fn refuse_send() -> Route {
    Route::new(RouteId::RefuseSend, Post, "/api/mailboxes/:mailboxId/sends/:sendId/refuse", "refuse_send")
        .summary("Refuse a send")
        .description("Declines the version of a submitted send the caller was shown, with a reason for its submitter. Nothing is sent. A send changed since is refused as with approve_send (409 send_changed).")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::SendId])
        .request::<RefuseSend>()
        .response::<Send>()
        .tier(Tier::Governed)
        .refuses(const { &[
            Refuses::Forbidden("An agent never decides on a send, and nobody decides on their own submission."),
            Refuses::Conflict("The send is not awaiting a decision, or another decision won a race."),
        ] })
        .authority(on_mailbox(&[Relation::ApprovalDecide]))
}

pub(super) fn list_approvals() -> Route {
    Route::new(RouteId::ListApprovals, Get, "/api/approvals", "list_approvals")
        .summary("Sends awaiting my decision")
        .description("Lists submitted sends awaiting a decision in mailboxes where the caller holds approval.decide, leaving out the caller's own submissions, oldest first, a page at a time; follow `next_cursor` for later submissions.")
        .query_parameters(const { &[LIMIT, CURSOR] })
        .response::<ApprovalQueue>()
        .authority(Authority::Filtered {
            machine_visible: false,
            all_of: &[Relation::ApprovalDecide],
            any_of: &[],
        })
}

#[cfg(test)]
mod tests {
    use crate::api::AddAttachment;
    use crate::api::limits::{
        OUTBOUND_ATTACHMENT_BYTES, OUTBOUND_ATTACHMENTS, OUTBOUND_ATTACHMENTS_TOTAL_BYTES, OUTBOUND_MESSAGE_BYTES,
    };

    /// The limits on a send's files, in the words a description states them
    /// with: each held to its constant here, so the words cannot drift.
    fn stated() -> [String; 4] {
        const MIB: usize = 1024 * 1024;
        [
            format!("at most {} KiB decoded per file", OUTBOUND_ATTACHMENT_BYTES / 1024),
            format!("{OUTBOUND_ATTACHMENTS} files per send"),
            format!("at most {} MiB as written", OUTBOUND_MESSAGE_BYTES / MIB),
            format!(
                "about {}.{} MiB of files",
                OUTBOUND_ATTACHMENTS_TOTAL_BYTES / MIB,
                OUTBOUND_ATTACHMENTS_TOTAL_BYTES * 10 / MIB % 10
            ),
        ]
    }

    #[test]
    fn the_words_on_a_sends_files_state_the_limits_as_the_constants_do() {
        let description = super::add_send_attachment().description.replace('\n', " ").to_lowercase();
        let schema = serde_json::to_value(schemars::schema_for!(AddAttachment)).unwrap();
        let field =
            schema["properties"]["content_base64"]["description"].as_str().unwrap().replace('\n', " ").to_lowercase();
        for words in stated().map(|words| words.to_lowercase()) {
            assert!(description.contains(&words), "add_send_attachment's description says {words:?}: {description}");
            assert!(field.contains(&words), "`content_base64` says {words:?}: {field}");
        }
    }
}
