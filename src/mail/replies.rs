//! A mailbox's saved replies: named texts its people insert in their drafts,
//! with placeholders the interface fills from the conversation (decision
//! 0045). This module owns their four routes, the placeholder check that
//! signatures share, and the refusals they give; its SQL is in
//! `store::replies`.
//!
//! The node keeps the text as written and never fills a placeholder itself:
//! whoever drafts knows the conversation. What it refuses is a placeholder it
//! does not list, when the text is saved, so nobody finds `{{customer.phone}}`
//! left in mail a customer received.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    CreateSavedReply, PLACEHOLDERS, SavedReply, SavedReplyDeleted, SavedReplyList, UpdateSavedReply, placeholders,
    reply_limits,
};

use super::store::replies::{self as store, SavedReplyRow, SavedReplyWritten};
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::QueryResult;
use crate::core::text;
use crate::core::time::rfc3339;

/// Why a call about saved replies or signatures was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyError {
    /// `field` holds a `{{…}}` the node does not list.
    UnknownPlaceholder { field: &'static str, written: String },
    /// `field` opens a placeholder with `{{` and never closes it.
    UnclosedPlaceholder { field: &'static str },
    /// Another saved reply of the mailbox has the name.
    NameTaken { name: String },
    /// The mailbox keeps as many saved replies as one may.
    TooMany,
    /// No saved reply of the mailbox has the id.
    NoSuchSavedReply { id: String },
}

/// The placeholders as a reader would list them.
fn listed() -> String {
    PLACEHOLDERS.iter().map(|(name, _)| format!("{{{{{name}}}}}")).collect::<Vec<_>>().join(", ")
}

impl From<ReplyError> for Refusal {
    fn from(error: ReplyError) -> Refusal {
        match error {
            ReplyError::UnknownPlaceholder { field, written } => Refusal::new(
                400,
                "unknown_placeholder",
                format!("`{field}` holds the placeholder {written}, which the node does not fill."),
                format!(
                    "A placeholder is filled when the text is inserted in a draft; the node fills only these: {}.",
                    listed()
                ),
                format!("Write {written} as one of those, or take it out of `{field}`."),
            ),
            ReplyError::UnclosedPlaceholder { field } => Refusal::new(
                400,
                "unknown_placeholder",
                format!("`{field}` opens a placeholder with {{{{ and never closes it with }}}}."),
                format!(
                    "A placeholder is written whole, such as {{{{customer.name}}}}; the node fills these: {}.",
                    listed()
                ),
                format!("Close the placeholder in `{field}` with }}}}, or take the {{{{ out."),
            ),
            ReplyError::NameTaken { name } => Refusal::new(
                409,
                "saved_reply_name_taken",
                format!("`name`: the mailbox already has a saved reply named {name}."),
                "A saved reply's name is unique in its mailbox, whatever its case, so its people can tell them apart.",
                "Choose another name, or change the saved reply that has it.",
            ),
            ReplyError::TooMany => Refusal::new(
                409,
                "too_many_saved_replies",
                "The reply was not saved: the mailbox keeps as many saved replies as one may.",
                format!("A mailbox keeps at most {} saved replies.", reply_limits::PER_MAILBOX),
                "Delete a saved reply nobody uses (delete_saved_reply), then save this one.",
            ),
            ReplyError::NoSuchSavedReply { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no saved reply {id} in this mailbox."),
                "No saved reply of this mailbox has this id; it may have been deleted.",
                "List the mailbox's saved replies with list_saved_replies and use an id from there.",
            ),
        }
    }
}

/// Refuses `value` at `field` if it holds a placeholder the node does not
/// list, or opens one it never closes.
pub fn known_placeholders(field: &'static str, value: &str) -> Result<(), ReplyError> {
    let mut rest = value;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(ReplyError::UnclosedPlaceholder { field });
        };
        let name = after[..end].trim();
        if !PLACEHOLDERS.iter().any(|(known, _)| *known == name) {
            return Err(ReplyError::UnknownPlaceholder { field, written: format!("{{{{{}}}}}", &after[..end]) });
        }
        rest = &after[end + 2..];
    }
    Ok(())
}

/// A text of 1 to `most` characters, not only blanks, its trailing blanks
/// dropped, holding only listed placeholders.
pub fn checked_text(field: &'static str, value: &str, most: usize) -> Result<String, Refusal> {
    let value = value.trim_end();
    if value.trim().is_empty() || value.chars().count() > most {
        return Err(RequestError::wrong_field(field, format!("1 to {most} characters, not only blanks")));
    }
    known_placeholders(field, value)?;
    Ok(value.to_string())
}

/// A saved reply's name: trimmed, 1 to the limit's characters, no direction controls.
fn checked_name(name: &str) -> Result<String, Refusal> {
    text::refuse_direction_controls("name", name)?;
    let name = name.trim();
    if name.is_empty() || name.chars().count() > reply_limits::NAME_CHARACTERS {
        return Err(RequestError::wrong_field("name", format!("1 to {} characters", reply_limits::NAME_CHARACTERS)));
    }
    Ok(name.to_string())
}

impl SavedReplyRow {
    fn present(self) -> SavedReply {
        SavedReply {
            id: self.id,
            mailbox_id: self.mailbox_id,
            name: self.name,
            body: self.body,
            updated_by: self.updated_by,
            updated_at: rfc3339(self.updated_at),
        }
    }
}

impl SavedReplyWritten<'_> {
    fn present(&self) -> SavedReply {
        SavedReply {
            id: self.id.to_string(),
            mailbox_id: self.mailbox_id.to_string(),
            name: self.name.to_string(),
            body: self.body.to_string(),
            updated_by: self.updated_by.to_string(),
            updated_at: rfc3339(self.updated_at),
        }
    }
}

fn rows(context: &Context<'_>, result: &QueryResult) -> Result<Vec<SavedReplyRow>, Refusal> {
    result.decode_all().map_err(|error| context.internal(error))
}

/// `GET /api/mailboxes/:mailboxId/saved-replies`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let [listed] = context.read_array([store::saved_replies(&mailbox_id)]).await?;
    let saved_replies = rows(context, &listed)?.into_iter().map(SavedReplyRow::present).collect();
    Ok(context.json(&SavedReplyList { saved_replies, limit: reply_limits::PER_MAILBOX, placeholders: placeholders() }))
}

/// `POST /api/mailboxes/:mailboxId/saved-replies`.
pub async fn create(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: CreateSavedReply = context.body()?;
    let name = checked_name(&request.name)?;
    let body = checked_text("body", &request.body, reply_limits::BODY_CHARACTERS)?;
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let [taken] = context.read_array([store::named(&mailbox_id, &name, "")]).await?;
    if !taken.rows.is_empty() {
        return Err(ReplyError::NameTaken { name }.into());
    }
    let id = new_id(IdKind::SavedReply, context.platform());
    let author = context.caller().actor_id().unwrap_or_default().to_string();
    let reply = SavedReplyWritten {
        id: &id,
        mailbox_id: &mailbox_id,
        name: &name,
        body: &body,
        updated_by: &author,
        updated_at: context.now_ms(),
    };
    context.write(store::create(&reply));
    context.guard(store::within_limit(&mailbox_id, reply_limits::PER_MAILBOX), ReplyError::TooMany);
    context.on_constraint_violation("saved_replies.mailbox_id", ReplyError::NameTaken { name: name.clone() });
    context.audit_object(id.clone());
    context.audit_detail(serde_json::json!({ "mailbox": mailbox_id, "name": name }));
    Ok(context.json(&reply.present()))
}

/// `PATCH /api/mailboxes/:mailboxId/saved-replies/:savedReplyId`.
pub async fn update(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: UpdateSavedReply = context.body()?;
    let name = request.name.as_deref().map(checked_name).transpose()?;
    let body =
        request.body.as_deref().map(|body| checked_text("body", body, reply_limits::BODY_CHARACTERS)).transpose()?;
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let id = context.path(PathParameter::SavedReplyId)?.to_string();
    let [found, taken] = context
        .read_array([
            store::saved_reply(&mailbox_id, &id),
            store::named(&mailbox_id, name.as_deref().unwrap_or(""), &id),
        ])
        .await?;
    let Some(current) = rows(context, &found)?.into_iter().next() else {
        return Err(ReplyError::NoSuchSavedReply { id }.into());
    };
    context.audit_object(id.clone());
    if let Some(name) = name.clone().filter(|_| !taken.rows.is_empty()) {
        return Err(ReplyError::NameTaken { name }.into());
    }
    let name = name.unwrap_or(current.name);
    let body = body.unwrap_or(current.body);
    let author = context.caller().actor_id().unwrap_or_default().to_string();
    let reply = SavedReplyWritten {
        id: &id,
        mailbox_id: &mailbox_id,
        name: &name,
        body: &body,
        updated_by: &author,
        updated_at: context.now_ms(),
    };
    context.write(store::update(&reply));
    context.on_constraint_violation("saved_replies.mailbox_id", ReplyError::NameTaken { name: name.clone() });
    context.audit_detail(serde_json::json!({ "mailbox": mailbox_id, "name": name }));
    Ok(context.json(&reply.present()))
}

/// `DELETE /api/mailboxes/:mailboxId/saved-replies/:savedReplyId`.
pub async fn delete(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let id = context.path(PathParameter::SavedReplyId)?.to_string();
    let [found] = context.read_array([store::saved_reply(&mailbox_id, &id)]).await?;
    let Some(current) = rows(context, &found)?.into_iter().next() else {
        return Err(ReplyError::NoSuchSavedReply { id }.into());
    };
    context.audit_object(id.clone());
    context.audit_detail(serde_json::json!({ "mailbox": mailbox_id, "name": current.name }));
    context.write(store::delete(&mailbox_id, &id));
    Ok(context.json(&SavedReplyDeleted { id }))
}
