//! Saved replies and signatures: a mailbox's named texts for drafts, its
//! signature, and each person's own signature (decision 0045).

use crate::api::{
    CreateSavedReply, SavedReply, SavedReplyDeleted, SavedReplyList, SetSignature, Signature, UpdateSavedReply,
};
use crate::relation::Relation;
use crate::route::Method::{Delete, Get, Patch, Post, Put};
use crate::route::{Authority, PathParameter, Refuses, Route, Tier};
use crate::route_id::RouteId;

use super::shared::on_mailbox;

/// Those who draft from a mailbox use its saved replies and signature, and
/// keep them: the team that answers is the team that knows what it says.
const DRAFTERS: Authority = on_mailbox(&[Relation::SendPropose]);

/// Why agents never write a mailbox's saved replies or signature.
const TEAM_WORDS: &str = "a mailbox's saved replies and signature are words its people put into every reply they send under the mailbox's name; people choose them, and an agent reads them (mail.draft) to write with";

/// Why a person's signature is not offered to agents.
const PERSONAL_SIGNATURE: &str = "a person's signature signs what that person writes; an agent writes as itself, so lending it its sponsor's signature would claim the person wrote what the agent did";

pub(super) fn list_saved_replies() -> Route {
    Route::new(RouteId::ListSavedReplies, Get, "/api/mailboxes/:mailboxId/saved-replies", "list_saved_replies")
        .summary("List a mailbox's saved replies")
        .description("Lists the saved replies of a mailbox the caller drafts from, by name: texts to start a reply with. Placeholders such as {{customer.name}} are left as written; the answer lists every placeholder and what fills it, so a drafter fills them from the conversation before putting the text in a draft.")
        .path_parameters(&[PathParameter::MailboxId])
        .response::<SavedReplyList>()
        .authority(DRAFTERS)
}

pub(super) fn create_saved_reply() -> Route {
    Route::new(RouteId::CreateSavedReply, Post, "/api/mailboxes/:mailboxId/saved-replies", "create_saved_reply")
        .summary("Save a reply")
        .description("Saves a named text for the mailbox's people to insert in their drafts. A placeholder not in the list is refused, naming it.")
        .path_parameters(&[PathParameter::MailboxId])
        .request::<CreateSavedReply>()
        .response::<SavedReply>()
        .created()
        .tier(Tier::Operator)
        .withheld_because(TEAM_WORDS)
        .refuses(const { &[
            Refuses::Conflict("Another saved reply of the mailbox has that name, or the mailbox keeps as many as one may."),
        ] })
        .authority(DRAFTERS)
}

pub(super) fn update_saved_reply() -> Route {
    Route::new(
        RouteId::UpdateSavedReply,
        Patch,
        "/api/mailboxes/:mailboxId/saved-replies/:savedReplyId",
        "update_saved_reply",
    )
    .summary("Change a saved reply")
    .description("Renames a saved reply or writes its text again; drafts it was inserted in keep what was inserted.")
    .path_parameters(&[PathParameter::MailboxId, PathParameter::SavedReplyId])
    .request::<UpdateSavedReply>()
    .response::<SavedReply>()
    .tier(Tier::Operator)
    .withheld_because(TEAM_WORDS)
    .refuses(const { &[Refuses::Conflict("Another saved reply of the mailbox has that name.")] })
    .authority(DRAFTERS)
}

pub(super) fn delete_saved_reply() -> Route {
    Route::new(
        RouteId::DeleteSavedReply,
        Delete,
        "/api/mailboxes/:mailboxId/saved-replies/:savedReplyId",
        "delete_saved_reply",
    )
    .summary("Delete a saved reply")
    .description("Deletes a saved reply; drafts it was inserted in keep what was inserted.")
    .path_parameters(&[PathParameter::MailboxId, PathParameter::SavedReplyId])
    .response::<SavedReplyDeleted>()
    .tier(Tier::Operator)
    .withheld_because(TEAM_WORDS)
    .authority(DRAFTERS)
}

pub(super) fn get_mailbox_signature() -> Route {
    Route::new(RouteId::GetMailboxSignature, Get, "/api/mailboxes/:mailboxId/signature", "get_mailbox_signature")
        .summary("Show a mailbox's signature")
        .description("Returns the signature a new draft from the mailbox ends with (empty when none is set), its placeholders left as written.")
        .path_parameters(&[PathParameter::MailboxId])
        .response::<Signature>()
        .authority(DRAFTERS)
}

pub(super) fn set_mailbox_signature() -> Route {
    Route::new(RouteId::SetMailboxSignature, Put, "/api/mailboxes/:mailboxId/signature", "set_mailbox_signature")
        .summary("Set a mailbox's signature")
        .description("Sets the signature new drafts from the mailbox end with, below the writer's own. A placeholder not in the list is refused, naming it.")
        .path_parameters(&[PathParameter::MailboxId])
        .request::<SetSignature>()
        .response::<Signature>()
        .tier(Tier::Operator)
        .withheld_because(TEAM_WORDS)
        .authority(DRAFTERS)
}

pub(super) fn remove_mailbox_signature() -> Route {
    Route::new(
        RouteId::RemoveMailboxSignature,
        Delete,
        "/api/mailboxes/:mailboxId/signature",
        "remove_mailbox_signature",
    )
    .summary("Remove a mailbox's signature")
    .description("Removes the mailbox's signature: new drafts from it end with the writer's own alone.")
    .path_parameters(&[PathParameter::MailboxId])
    .response::<Signature>()
    .tier(Tier::Operator)
    .withheld_because(TEAM_WORDS)
    .authority(DRAFTERS)
}

pub(super) fn get_my_signature() -> Route {
    Route::new(RouteId::GetMySignature, Get, "/api/me/signature", "get_my_signature")
        .summary("Show my signature")
        .description("Returns the signed-in person's own signature (empty when none is set), which their new drafts start with above the mailbox's.")
        .response::<Signature>()
        .exception(Tier::Operator, PERSONAL_SIGNATURE)
        .authority(Authority::Personal)
}

pub(super) fn set_my_signature() -> Route {
    Route::new(RouteId::SetMySignature, Put, "/api/me/signature", "set_my_signature")
        .summary("Set my signature")
        .description("Sets the signed-in person's own signature. A placeholder not in the list is refused, naming it.")
        .request::<SetSignature>()
        .response::<Signature>()
        .tier(Tier::Operator)
        .withheld_because(PERSONAL_SIGNATURE)
        .authority(Authority::Personal)
}

pub(super) fn remove_my_signature() -> Route {
    Route::new(RouteId::RemoveMySignature, Delete, "/api/me/signature", "remove_my_signature")
        .summary("Remove my signature")
        .description("Removes the signed-in person's own signature.")
        .response::<Signature>()
        .tier(Tier::Operator)
        .withheld_because(PERSONAL_SIGNATURE)
        .authority(Authority::Personal)
}
