//! What the published butlers do when mail arrives: read beside the delivery's
//! own first round trip, judged, and their effects written in the batch that
//! stores the message, each one audited as the butler for its pinned sponsor. An
//! effect the sponsor can no longer authorise is skipped and recorded, and the
//! sponsor's feed says so.

use mailroom_contract::Relation;
use mailroom_contract::api::normalise_label;
use mailroom_contract::api::{
    AttachmentSummary, ButlerEffect, ButlerRules, EmailAddress, NotificationKind, SenderAuthentication, butler_limits,
};
use serde::Deserialize;

use super::rules::{DeliveryFacts, judge};
use super::{held_elsewhere, held_elsewhere_of, relations};
use crate::authz::tuples::{self, Holder};
use crate::core::addresses;
use crate::core::context::ports::AuditRecord;
use crate::core::ids::{IdKind, new_id};
use crate::core::node::Node;
use crate::core::outbound::{self, Destination, OutboundPolicy};
use crate::core::platform::Platform;
use crate::core::storage::{QueryResult, Row, Statement, Value};
use crate::mail::search::index;
use crate::mail::sends;
use crate::mail::threads::{labels, linking};
use crate::notifications::{self, Addressee, Notice};

/// The columns of `receipts r` a butler judges.
pub(super) const FACT_COLUMNS: &str =
    "r.from_address, r.from_name, r.to_json, r.cc_json, r.subject, r.sender_authentication, r.attachments_json";

fn written(address: &EmailAddress) -> String {
    addresses::display(address.name.as_deref().filter(|name| !name.is_empty()), &address.address)
}

/// A stored receipt's facts, from `FACT_COLUMNS`.
pub(super) fn facts_of_row(row: &Row) -> DeliveryFacts {
    let from_address = row.optional_text("from_address").ok().flatten().unwrap_or_default();
    let from_name = row.optional_text("from_name").ok().flatten();
    let listed = |column: &str| -> Vec<EmailAddress> {
        row.text(column).ok().and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default()
    };
    let attachments: Vec<AttachmentSummary> =
        row.text("attachments_json").ok().and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default();
    DeliveryFacts {
        from: written(&EmailAddress { address: from_address, name: from_name }),
        recipients: listed("to_json").iter().chain(&listed("cc_json")).map(written).collect(),
        subject: row.text("subject").unwrap_or_default(),
        sender_authentication: row
            .optional_text("sender_authentication")
            .ok()
            .flatten()
            .and_then(|name| SenderAuthentication::parse(&name)),
        attachments: attachments.len(),
    }
}

/// A delivery's facts, as the email handler parsed them.
pub fn facts_of_delivery(
    from: Option<&EmailAddress>,
    recipients: impl IntoIterator<Item = EmailAddress>,
    subject: &str,
    sender_authentication: Option<SenderAuthentication>,
    attachments: usize,
) -> DeliveryFacts {
    DeliveryFacts {
        from: from.map(written).unwrap_or_default(),
        recipients: recipients.into_iter().map(|address| written(&address)).collect(),
        subject: subject.to_string(),
        sender_authentication,
        attachments,
    }
}

/// The statement reading the active published butlers of the mailbox at
/// `address`, with their published rules, pinned relations and what each
/// sponsor holds there now: for the delivery's first round trip.
pub fn active_on_delivery(address: &str) -> Statement {
    Statement::new(format!(
        "SELECT b.id, b.sponsor_id, v.version, v.rules_json, v.pinned_relations_json, {} AS held_now, \
           {} AS held_elsewhere \
         FROM butlers b JOIN mailboxes m ON m.id = b.mailbox_id \
         JOIN butler_versions v ON v.butler_id = b.id AND v.version = b.published_version \
         WHERE m.address = ?1 AND b.active = 1 ORDER BY b.name, b.id LIMIT {}",
        tuples::relations_of_person_in("b.sponsor_id", "b.mailbox_id"),
        held_elsewhere("json_each(v.rules_json, '$.effects') e", "1"),
        butler_limits::ACTIVE_PER_MAILBOX
    ))
    .bind(address)
}

#[derive(Deserialize)]
struct ActiveButler {
    id: String,
    sponsor_id: String,
    version: i64,
    rules_json: String,
    pinned_relations_json: Option<String>,
    held_now: Option<String>,
    held_elsewhere: Option<String>,
}

/// The statement carrying out `effect` on conversation `thread_id` in
/// `mailbox_id`, if it is a change in the database. An assignee must still work
/// the mailbox when it runs.
fn carry_out(effect: &ButlerEffect, thread_id: &str, mailbox_id: &str, now_ms: i64) -> Option<Statement> {
    Some(match effect {
        ButlerEffect::SetStatus { status } => {
            Statement::new("UPDATE mail_threads SET status = ?1 WHERE id = ?2").bind(status.name()).bind(thread_id)
        }
        // Posted once the delivery is stored (`post_webhooks`); a reply is a
        // send (`on_delivery`), a copy a receipt of its own (`file_copy`).
        ButlerEffect::NotifyWebhook { .. } | ButlerEffect::DraftReply { .. } | ButlerEffect::Forward { .. } => {
            return None;
        }
        ButlerEffect::Assign { assignee } => {
            let works = tuples::holds(&Holder::of_actor(assignee, now_ms), Relation::SendPropose, mailbox_id);
            let mut parameters: Vec<Value> = vec![assignee.as_str().into(), thread_id.into()];
            parameters.extend(works.parameters);
            Statement {
                sql: format!("UPDATE mail_threads SET assignee = ? WHERE id = ? AND ({}) = 1", works.sql).into(),
                parameters,
            }
        }
        // Validated when the version was written; kept to the cap in SQL.
        ButlerEffect::Label { label } => labels::add_label(thread_id, &normalise_label(label)?),
    })
}

/// The columns a filed copy takes from the original as they are (a native test
/// holds them to the receipts table).
pub const COPIED_COLUMNS: [&str; 26] = [
    "message_id",
    "claimed_message_id",
    "content_digest",
    "envelope_from",
    "from_address",
    "from_name",
    "to_json",
    "cc_json",
    "recipients",
    "subject",
    "sent_at",
    "received_at",
    "in_reply_to_json",
    "references_json",
    "size",
    "raw_key",
    "text_body",
    "text_source",
    "text_truncated",
    "attachments_json",
    "reply_to_json",
    "to_not_kept",
    "cc_not_kept",
    "attachments_not_listed",
    "sender_authentication",
    "authentication_json",
];

/// The statements filing a copy of receipt `receipt_id` in mailbox `target`
/// for `butler`, and the copy's id. The copy shares the original's stored
/// bytes, joins the conversation its Message-IDs name there or begins one, and
/// is kept only if the mailbox is still the node's and the sponsor still reads
/// it when the batch runs; a mailbox that already holds the message keeps its
/// own.
fn file_copy(
    butler: &ActiveButler,
    receipt_id: &str,
    target: &str,
    subject: &str,
    platform: &dyn Platform,
) -> (String, Vec<Statement>) {
    let copy_id = new_id(IdKind::Receipt, platform);
    let new_thread_id = new_id(IdKind::Thread, platform);
    let reads = tuples::holds(&Holder::Person(butler.sponsor_id.clone()), Relation::MailboxContentRead, target);
    let mut parameters: Vec<Value> = vec![
        copy_id.as_str().into(),
        target.into(),
        target.into(),
        linking::subject_key(subject).0.into(),
        new_thread_id.as_str().into(),
        butler.id.as_str().into(),
        receipt_id.into(),
        target.into(),
    ];
    parameters.extend(reads.parameters);
    let copied = COPIED_COLUMNS.join(", ");
    let from_original = COPIED_COLUMNS.map(|column| format!("r.{column}")).join(", ");
    let insert = Statement {
        sql: format!(
            "INSERT INTO receipts (id, mailbox_id, thread_id, filed_by, {copied}) \
             SELECT ?, ?, COALESCE(({}), ?), ?, {from_original} FROM receipts r \
             WHERE r.id = ? AND EXISTS (SELECT 1 FROM mailboxes WHERE id = ?) AND ({}) = 1 \
             ON CONFLICT (mailbox_id, message_id) DO NOTHING",
            linking::thread_by_message_ids_of_r(),
            reads.sql
        )
        .into(),
        parameters,
    };
    let mut statements = vec![insert];
    statements.extend(index::indexed(&copy_id));
    statements.extend(linking::file_into(&copy_id, &new_thread_id, subject));
    (copy_id, statements)
}

/// A webhook a butler posts once the delivery is stored.
#[derive(Clone, Debug)]
pub struct WebhookPost {
    pub butler_id: String,
    pub url: String,
    /// The JSON body.
    pub body: String,
}

/// What the delivery's butlers do: statements for the batch that stores the
/// message, the audit records of each effect run or skipped, and the webhooks to
/// post once it is stored.
#[derive(Debug, Default)]
pub struct ButlerWork {
    pub statements: Vec<Statement>,
    pub records: Vec<AuditRecord>,
    pub posts: Vec<WebhookPost>,
}

/// Posts each of `posts`, signed with its butler's secret derived from the
/// node's session key: one attempt each, several at once, each within its time
/// and only where `core::outbound`'s rule allows now (an address stored before
/// the rule is refused here). A receiver that fails is logged, and the delivery
/// stands.
pub async fn post_webhooks(posts: &[WebhookPost], node: &Node<'_>) {
    let policy = node.config.outbound_policy();
    let outcomes = outbound::each_at_once(posts, |post| post_webhook(post, node, &policy)).await;
    for (post, outcome) in posts.iter().zip(outcomes) {
        if let Err(error) = outcome {
            node.platform.log(&format!("butler {}: {error}", post.butler_id));
        }
    }
}

/// One butler's post, where `policy` allows it now, within its time.
async fn post_webhook(post: &WebhookPost, node: &Node<'_>, policy: &OutboundPolicy) -> Result<(), String> {
    let destination = Destination::check(&post.url, butler_limits::WEBHOOK_URL_BYTES, policy)
        .map_err(|refused| format!("its webhook was not posted: {}", refused.why()))?;
    let secret = crate::core::webhooks::derived_secret(&node.config.session_key, &post.butler_id);
    let signature = crate::core::webhooks::signature(&secret, node.platform.now_ms(), &post.body);
    let headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("mailroom-signature".to_string(), signature),
    ];
    let posted = node.webhooks.post(&destination, &headers, &post.body);
    match outbound::within(node.platform, outbound::POST_TIMEOUT_MS, posted).await {
        Some(Ok(status)) if (200..300).contains(&status) => Ok(()),
        Some(Ok(status)) => Err(format!("its webhook answered {status}")),
        Some(Err(error)) => Err(format!("its webhook: {}", error.0)),
        None => Err(format!("its webhook did not answer within {} seconds", outbound::POST_TIMEOUT_MS / 1000)),
    }
}

/// What a reply to the delivery is addressed and threaded by.
pub struct ReplyBasis<'a> {
    /// The delivery's Reply-To or, without one, its From.
    pub to: &'a [EmailAddress],
    pub message_id: &'a str,
    /// The delivery's In-Reply-To: a reply's References begin with it when the
    /// delivery has no References (RFC 5322 §3.6.4).
    pub in_reply_to: &'a [String],
    pub references: &'a [String],
}

/// What the delivery's butlers do to receipt `receipt_id` (in conversation
/// `thread_id` of `mailbox_id`).
#[allow(clippy::too_many_arguments)]
pub fn on_delivery(
    butlers: &QueryResult,
    facts: &DeliveryFacts,
    reply: &ReplyBasis<'_>,
    receipt_id: &str,
    thread_id: &str,
    mailbox_id: &str,
    platform: &dyn Platform,
) -> ButlerWork {
    let now_ms = platform.now_ms();
    let mut work = ButlerWork::default();
    let ButlerWork { statements, records, posts } = &mut work;
    let active: Vec<ActiveButler> = butlers.decode_all().unwrap_or_default();
    for butler in active {
        let Ok(rules) = serde_json::from_str::<ButlerRules>(&butler.rules_json) else { continue };
        let pinned: Vec<String> = butler
            .pinned_relations_json
            .as_deref()
            .and_then(|json| serde_json::from_str(json).ok())
            .unwrap_or_default();
        let pinned = relations(pinned.iter().map(String::as_str));
        let held_now = relations(butler.held_now.as_deref().unwrap_or_default().split(','));
        let elsewhere = held_elsewhere_of(butler.held_elsewhere.as_deref());
        let judged = judge(&rules, facts, &held_now, Some(&pinned), &elsewhere);
        statements.push(
            Statement::new(
                "INSERT INTO butler_runs (butler_id, receipt_id, version, at, matched, outcome_json) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (butler_id, receipt_id) DO NOTHING",
            )
            .bind(butler.id.as_str())
            .bind(receipt_id)
            .bind(butler.version)
            .bind(now_ms)
            .bind(i64::from(judged.matched))
            .bind(serde_json::json!({ "conditions": judged.conditions, "effects": judged.effects }).to_string()),
        );
        if !judged.matched {
            continue;
        }
        for effect in &judged.effects {
            let mut ran = effect.would_run;
            let mut outcome = effect.outcome.clone();
            if let (true, ButlerEffect::DraftReply { text }) = (ran, &effect.effect) {
                let drafted = sends::ButlerReply {
                    mailbox_id,
                    thread_id,
                    receipt_id,
                    sponsor: &butler.sponsor_id,
                    to: reply.to,
                    subject: &facts.subject,
                    text: text.replace("{sender}", &facts.from).replace("{subject}", &facts.subject),
                    message_id: reply.message_id,
                    in_reply_to: reply.in_reply_to,
                    references: reply.references,
                };
                match sends::submitted_for_butler(&drafted, platform) {
                    Some((send_id, written)) => {
                        statements.extend(written);
                        outcome = format!("{outcome}: {send_id}");
                    }
                    None => {
                        ran = false;
                        outcome = "skipped: the message names no address a reply could go to".into();
                    }
                }
            }
            if let (true, ButlerEffect::Forward { mailbox }) = (ran, &effect.effect) {
                let (copy_id, filed) = file_copy(&butler, receipt_id, mailbox, &facts.subject, platform);
                statements.extend(filed);
                outcome = format!("{outcome}: {copy_id}, unless that mailbox already holds the message");
            }
            if ran {
                statements.extend(carry_out(&effect.effect, thread_id, mailbox_id, now_ms));
                if let ButlerEffect::NotifyWebhook { url } = &effect.effect {
                    let body = serde_json::json!({
                        "kind": "butler.delivery",
                        "butler": butler.id,
                        "version": butler.version,
                        "mailbox": mailbox_id,
                        "receipt": receipt_id,
                        "thread": thread_id,
                        "from": facts.from,
                        "recipients": facts.recipients,
                        "subject": facts.subject,
                        "sender_authentication": facts.sender_authentication.map(SenderAuthentication::name),
                        "attachments": facts.attachments,
                    });
                    posts.push(WebhookPost { butler_id: butler.id.clone(), url: url.clone(), body: body.to_string() });
                }
            } else {
                let notice = Notice {
                    kind: NotificationKind::ButlerEffectSkipped,
                    object_id: thread_id,
                    mailbox_id: Some(mailbox_id),
                    actor: Some(&butler.id),
                    title: &facts.subject,
                    detail: Some(&outcome),
                };
                statements.push(notifications::notify(&notice, Addressee::PersonOf(&butler.sponsor_id), platform));
            }
            records.push(AuditRecord {
                at: now_ms,
                actor: Some(butler.id.clone()),
                delegator: Some(butler.sponsor_id.clone()),
                surface: Some("email"),
                action: "butler_effect".into(),
                object: Some(thread_id.to_string()),
                outcome: if ran { "ok" } else { "skipped" },
                detail: Some(
                    serde_json::json!({
                        "butler": butler.id,
                        "version": butler.version,
                        "receipt": receipt_id,
                        "effect": effect.effect,
                        "outcome": outcome,
                    })
                    .to_string(),
                ),
            });
        }
    }
    work
}
