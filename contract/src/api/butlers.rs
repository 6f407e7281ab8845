//! Butlers: an administrator's rules over a mailbox's inbound mail, each with a
//! sponsor whose authority its effects run under, edited as draft versions and
//! published with that authority pinned, and a dry run over a past delivery.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::{SenderAuthentication, ThreadStatus};
use crate::relation::Relation;

/// Limits on butlers, stated once because the contract publishes them.
pub mod butler_limits {
    /// The longest name, in characters.
    pub const NAME_CHARACTERS: usize = 100;
    /// How many conditions one version may hold.
    pub const CONDITIONS: usize = 20;
    /// How many effects one version may hold.
    pub const EFFECTS: usize = 10;
    /// The longest text a condition matches, in characters.
    pub const MATCH_CHARACTERS: usize = 200;
    /// How many published butlers act on one mailbox's delivery.
    pub const ACTIVE_PER_MAILBOX: usize = 20;
    /// The longest webhook address, in bytes.
    pub const WEBHOOK_URL_BYTES: usize = 500;
    /// The longest reply text a butler drafts, in characters.
    pub const REPLY_CHARACTERS: usize = 10_000;
}

/// One test a delivery must pass. Text matches ignore case and look for the
/// text anywhere in the field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "on", rename_all = "snake_case", deny_unknown_fields)]
#[schemars(transform = describe_tag)]
pub enum ButlerCondition {
    /// The sender's address or name contains `contains`.
    From {
        /// The text to look for.
        contains: String,
    },
    /// A To or Cc recipient's address or name contains `contains`.
    Recipients {
        /// The text to look for.
        contains: String,
    },
    /// The subject contains `contains`.
    Subject {
        /// The text to look for.
        contains: String,
    },
    /// The sender's authentication, from the receiving service's stamp, is `is`.
    SenderAuthentication {
        /// The verdict the delivery must have.
        is: SenderAuthentication,
    },
    /// The message has attachments (`is: true`) or has none (`is: false`).
    Attachments {
        /// Whether it must have attachments.
        is: bool,
    },
}

/// Gives a tagged union's tag (`on`, `do`) the description of the variant it
/// names, which serde's derived schema leaves without one.
fn describe_tag(schema: &mut schemars::Schema) {
    let Some(variants) = schema.get_mut("oneOf").and_then(serde_json::Value::as_array_mut) else { return };
    for variant in variants {
        let description = variant.get("description").cloned();
        let Some(properties) = variant.get_mut("properties").and_then(serde_json::Value::as_object_mut) else {
            continue;
        };
        for tag in ["on", "do"] {
            if let (Some(property), Some(description)) = (properties.get_mut(tag), description.clone()) {
                property["description"] = description;
            }
        }
    }
}

/// One thing a butler does to a delivery that passed every condition, to the
/// conversation it joined, with its sponsor's authority.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "do", rename_all = "snake_case", deny_unknown_fields)]
#[schemars(transform = describe_tag)]
pub enum ButlerEffect {
    /// Sets the conversation's status. Needs send.propose on the mailbox.
    SetStatus {
        /// The status to set.
        status: ThreadStatus,
    },
    /// Assigns the conversation to a person or agent who works the mailbox
    /// when the message arrives (skipped, with why, when they no longer do);
    /// a person is told as when someone assigns it by hand. Needs send.propose
    /// on the mailbox.
    Assign {
        /// Who to assign it to (`usr_…` or `agt_…`), someone who holds send.propose there.
        assignee: String,
    },
    /// Drafts a reply to the sender (its Reply-To, or From) with `text`, in
    /// which `{sender}` and `{subject}` stand for the delivery's, and submits
    /// it for approval in the sponsor's name: nothing is sent until a second
    /// person who holds approval.decide approves it, and the sponsor can never
    /// be that person. It never addresses one of this node's own mailboxes: a
    /// Reply-To naming only those falls back to the From, and with no other
    /// address the effect is skipped. Needs mailbox.metadata.read and
    /// send.propose.
    DraftReply {
        /// The reply's text, at most `butler_limits::REPLY_CHARACTERS`.
        text: String,
    },
    /// Posts the delivery's metadata (sender, recipients, subject, ids; never
    /// its text) as JSON to `url` once it is stored, signed in the
    /// `mailroom-signature` header with the butler's `webhook_secret`. One
    /// attempt, not retried; one that fails is recorded as failed and told to
    /// the sponsor. Needs mailbox.metadata.read on the mailbox.
    NotifyWebhook {
        /// An https address on the internet, at most
        /// `butler_limits::WEBHOOK_URL_BYTES` bytes, without credentials in
        /// it: never inside a network (loopback, private, link-local,
        /// unique-local, shared addresses in any spelling, `localhost`,
        /// `.local`, `.internal`), except loopback for a node that itself runs
        /// on a loopback origin.
        url: String,
    },
    /// Files a copy of the delivery in another mailbox of this node, where it
    /// joins the conversation its Message-IDs name there or begins one, marked
    /// as filed by this butler. That mailbox's own butlers do not act on the
    /// copy, so butlers never chain, and a mailbox that already holds the
    /// message keeps the one it has (skipped, as already so). Needs
    /// mailbox.metadata.read and mailbox.content.read here, and the sponsor
    /// must read the other mailbox's content too, when the version is
    /// published and when it runs.
    Forward {
        /// The mailbox to file the copy in (`mbx_…`), not the butler's own.
        mailbox: String,
    },
    /// Adds `label` to the conversation (normalised as `update_thread` keeps
    /// labels); one it already has is left (skipped, as already so), and one
    /// past `label_limits::LABELS_PER_CONVERSATION` is not added (skipped, and
    /// the sponsor told). Needs send.propose on the mailbox.
    Label {
        /// The label, at most `label_limits::LABEL_CHARACTERS` characters.
        label: String,
    },
}

impl ButlerEffect {
    /// The relations the sponsor must hold on the mailbox for the effect to run,
    /// both when the version was published and when it runs.
    pub fn requires(&self) -> &'static [Relation] {
        match self {
            ButlerEffect::SetStatus { .. } | ButlerEffect::Assign { .. } | ButlerEffect::DraftReply { .. } => {
                &[Relation::MailboxMetadataRead, Relation::SendPropose]
            }
            ButlerEffect::NotifyWebhook { .. } => &[Relation::MailboxMetadataRead],
            ButlerEffect::Forward { .. } => &[Relation::MailboxMetadataRead, Relation::MailboxContentRead],
            // As setting the status: labelling is triage.
            ButlerEffect::Label { .. } => &[Relation::MailboxMetadataRead, Relation::SendPropose],
        }
    }

    /// Another mailbox the effect reaches, with the relations the sponsor must
    /// hold there as well, both when the version is published and when it runs.
    pub fn requires_elsewhere(&self) -> Option<(&str, &'static [Relation])> {
        match self {
            ButlerEffect::Forward { mailbox } => Some((mailbox, &[Relation::MailboxContentRead])),
            _ => None,
        }
    }
}

/// What a version does.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ButlerRules {
    /// Every one must hold for the butler to act; none means every delivery.
    #[schemars(length(max = butler_limits::CONDITIONS))]
    pub conditions: Vec<ButlerCondition>,
    /// What it does, in order.
    #[schemars(length(min = 1, max = butler_limits::EFFECTS))]
    pub effects: Vec<ButlerEffect>,
}

/// One version of a butler's rules.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ButlerVersion {
    /// Its number, from 1.
    pub version: i64,
    /// What it does.
    pub rules: ButlerRules,
    /// When it was written (RFC 3339).
    pub created_at: String,
    /// Who wrote it (`usr_…`).
    pub created_by: String,
    /// When it was published (RFC 3339), if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
    /// The relations its sponsor held on the mailbox when it was published: its
    /// effects never run with more, whatever is granted later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_relations: Option<Vec<String>>,
}

/// A butler.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Butler {
    /// The butler's id (`btl_…`).
    pub id: String,
    /// The mailbox whose deliveries it works on (`mbx_…`).
    pub mailbox_id: String,
    /// Its name.
    pub name: String,
    /// The person whose authority its effects run under (`usr_…`).
    pub sponsor: String,
    /// The sponsor's name.
    pub sponsor_name: Option<String>,
    /// The version last published, if one was: it acts on deliveries while the
    /// butler is `active`, and is kept while the butler is deactivated, to act
    /// again when it is activated.
    pub published_version: Option<i64>,
    /// Whether a published version acts on deliveries.
    pub active: bool,
    /// Every version, newest first.
    pub versions: Vec<ButlerVersion>,
    /// The secret its webhook posts are signed with (HMAC-SHA256 over
    /// `<unix seconds>.<body>`, sent as `mailroom-signature: t=…,v1=…`), when
    /// one of its versions notifies a webhook. Derived from the node's own
    /// secret, so the database never holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_secret: Option<String>,
}

/// A mailbox's butlers.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ButlerList {
    /// The mailbox's butlers, by name.
    pub butlers: Vec<Butler>,
}

/// A new butler: its first version is a draft.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateButler {
    /// A name people will recognise, at most `butler_limits::NAME_CHARACTERS`.
    pub name: String,
    /// The person whose authority its effects run under (`usr_…`).
    pub sponsor: String,
    /// What its first version does.
    pub rules: ButlerRules,
}

/// Changes to a butler: new rules make a new draft version; nothing published changes.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateButler {
    /// A new name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// New rules, as a new draft version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<ButlerRules>,
    /// `false` stops the published version acting on deliveries; `true` lets it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<bool>,
}

/// Which version to publish.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishButler {
    /// The version to publish: the one the administrator read.
    pub version: i64,
}

/// What to simulate.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulateButler {
    /// The past delivery (`rcp_…`) in the butler's mailbox to walk the version over.
    pub receipt_id: String,
    /// The version to walk; by default the newest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
}

/// One condition, judged.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ConditionJudged {
    /// The condition.
    pub condition: ButlerCondition,
    /// Whether the delivery passed it.
    pub matched: bool,
    /// What the delivery had, in the condition's field.
    pub found: String,
}

/// One effect, as it would go.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct EffectJudged {
    /// The effect.
    pub effect: ButlerEffect,
    /// Whether it would run: every condition passed, the sponsor's authority
    /// (pinned, intersected with what they hold now) allows it, and it could
    /// apply (its assignee works the mailbox, the conversation has room for its
    /// label, a reply has an address outside the node) and is not already so.
    pub would_run: bool,
    /// What it would do, or why it would be skipped.
    pub outcome: String,
}

/// A dry run: what a version would do to a past delivery. Nothing was changed.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ButlerSimulation {
    /// The butler (`btl_…`).
    pub butler_id: String,
    /// The version walked.
    pub version: i64,
    /// The delivery it was walked over (`rcp_…`).
    pub receipt_id: String,
    /// Whether every condition passed.
    pub matched: bool,
    /// Each condition, in order, judged.
    pub conditions: Vec<ConditionJudged>,
    /// Each effect, in order, as it would go.
    pub effects: Vec<EffectJudged>,
}
