//! Saved replies and signatures: a mailbox's named texts its people insert in
//! drafts, with placeholders filled from the conversation, and the signature a
//! mailbox and a person each add to a new draft.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Limits on saved replies and signatures, stated once because the contract
/// publishes them.
pub mod reply_limits {
    /// The longest saved reply's name, in characters.
    pub const NAME_CHARACTERS: usize = 80;
    /// The longest saved reply's body, in characters.
    pub const BODY_CHARACTERS: usize = 10_000;
    /// How many saved replies one mailbox keeps.
    pub const PER_MAILBOX: usize = 200;
    /// The longest signature, in characters.
    pub const SIGNATURE_CHARACTERS: usize = 2_000;
}

/// The placeholders a saved reply or a signature may hold, written
/// `{{customer.name}}`, with what each is filled with when it is inserted in a
/// draft. Any other `{{…}}` is refused when the text is saved.
pub const PLACEHOLDERS: &[(&str, &str)] = &[
    (
        "customer.name",
        "The name of the person the reply goes to, as their message's From gave it (or their address, when it gave none).",
    ),
    ("customer.first_name", "The first word of that name."),
    ("customer.email", "The address the reply goes to."),
    ("me.name", "The name of the person writing the draft."),
    ("me.email", "The address of the person writing the draft."),
    ("mailbox.name", "The display name of the mailbox the reply is sent from."),
    ("mailbox.address", "The address of the mailbox the reply is sent from."),
];

/// A placeholder a saved reply or signature may hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Placeholder {
    /// How it is written in a text, such as `{{customer.name}}`.
    pub written: String,
    /// What it is filled with when the text is inserted in a draft.
    pub meaning: String,
}

/// Every placeholder, as the contract lists them.
pub fn placeholders() -> Vec<Placeholder> {
    PLACEHOLDERS
        .iter()
        .map(|(name, meaning)| Placeholder { written: format!("{{{{{name}}}}}"), meaning: (*meaning).to_string() })
        .collect()
}

/// A saved reply: a named text a mailbox's people insert in their drafts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SavedReply {
    /// The saved reply's id (`svr_…`).
    pub id: String,
    /// The mailbox it belongs to (`mbx_…`).
    pub mailbox_id: String,
    /// Its name, unique in the mailbox, such as `Refund issued`.
    #[schemars(length(max = reply_limits::NAME_CHARACTERS))]
    pub name: String,
    /// Its text, with placeholders such as `{{customer.name}}` left as written:
    /// they are filled when the text is inserted in a draft.
    #[schemars(length(max = reply_limits::BODY_CHARACTERS))]
    pub body: String,
    /// Who wrote it last (`usr_…`).
    pub updated_by: String,
    /// When it was written last (RFC 3339).
    pub updated_at: String,
}

/// A mailbox's saved replies.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SavedReplyList {
    /// Every one of them, by name.
    #[schemars(length(max = reply_limits::PER_MAILBOX))]
    pub saved_replies: Vec<SavedReply>,
    /// How many one mailbox may keep.
    pub limit: usize,
    /// The placeholders a saved reply may hold, with what each is filled with.
    pub placeholders: Vec<Placeholder>,
}

/// A new saved reply.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSavedReply {
    /// Its name, 1 to `reply_limits::NAME_CHARACTERS` characters, unique in the mailbox.
    pub name: String,
    /// Its text, 1 to `reply_limits::BODY_CHARACTERS` characters; placeholders
    /// only from the list `list_saved_replies` gives.
    pub body: String,
}

/// Changes to a saved reply: the fields given are replaced.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateSavedReply {
    /// A new name, 1 to `reply_limits::NAME_CHARACTERS` characters, unique in the mailbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A new text, 1 to `reply_limits::BODY_CHARACTERS` characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

/// A saved reply deleted.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SavedReplyDeleted {
    /// The saved reply's id (`svr_…`).
    pub id: String,
}

/// A signature: the text a new draft starts with below the cursor, a
/// mailbox's or a person's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Signature {
    /// Whose it is: the mailbox (`mbx_…`) or the person (`usr_…`).
    pub owner: String,
    /// The signature's text, empty when none is set; it may hold placeholders.
    #[schemars(length(max = reply_limits::SIGNATURE_CHARACTERS))]
    pub text: String,
    /// Who set it (`usr_…`), when one is set.
    #[serde(default)]
    pub updated_by: Option<String>,
    /// When it was set (RFC 3339), when one is set.
    #[serde(default)]
    pub updated_at: Option<String>,
    /// The longest signature, in characters.
    pub limit: usize,
}

/// Sets a signature.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetSignature {
    /// The signature's text, 1 to `reply_limits::SIGNATURE_CHARACTERS`
    /// characters; placeholders only from the list `list_saved_replies` gives.
    pub text: String,
}
