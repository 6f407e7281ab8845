//! What the published butlers do when mail arrives: read beside the delivery's
//! own first round trip with what is around it (`surroundings`), judged, and
//! their effects written in the batch that stores the message, each one audited
//! as the butler for its pinned sponsor. An effect that could not apply (its
//! sponsor's authority, its assignee, the conversation or the address did not
//! let it) is recorded as skipped with its reason, and the sponsor's feed says
//! so; one whose work is already done is recorded as skipped, and told to
//! nobody. A webhook that fails once the delivery is stored is recorded then.

use mailroom_contract::api::normalise_label;
use mailroom_contract::api::{
    AttachmentSummary, ButlerEffect, ButlerRules, EmailAddress, NotificationKind, SenderAuthentication, butler_limits,
};

use super::rules::{DeliveryFacts, Skipped, SponsorAuthority, held_elsewhere_of, judge, relations};
use std::collections::BTreeMap;

use super::store::{self, FiledCopy, Run, Target};
use super::surroundings::{self, Conversation};
use crate::core::addresses;
use crate::core::context::ports::AuditRecord;
use crate::core::delivery::{self, Post, Undelivered};
use crate::core::events::Topic;
use crate::core::ids::{IdKind, is_id_of, new_id};
use crate::core::node::Node;
use crate::core::outbound::{self, OutboundPolicy};
use crate::core::platform::Platform;
use crate::core::storage::{QueryResult, Row, Statement};
use crate::mail::originals;
use crate::mail::search::index;
use crate::mail::sends;
use crate::mail::threads::{labels, linking};
use crate::notifications::{self, Addressee, Notice};

fn written(address: &EmailAddress) -> String {
    addresses::display(address.name.as_deref().filter(|name| !name.is_empty()), &address.address)
}

/// A stored receipt's facts, from `store::FACT_COLUMNS`.
pub(super) fn facts_of_row(row: &Row) -> DeliveryFacts {
    let from_address = row.optional_text("from_address").ok().flatten().unwrap_or_default();
    let from_name = row.optional_text("from_name").ok().flatten();
    let listed = |column: &str| -> Vec<EmailAddress> {
        row.text(column).ok().and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default()
    };
    let attachments: Vec<AttachmentSummary> =
        row.text("attachments_json").ok().and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default();
    let sender = EmailAddress { address: from_address, name: from_name };
    DeliveryFacts {
        from: written(&sender),
        reply_to: listed("reply_to_json"),
        sender: Some(sender).filter(|sender| !sender.address.is_empty()),
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

/// A delivery as the email handler parsed it, for its butlers.
pub struct Delivered<'a> {
    pub from: Option<&'a EmailAddress>,
    pub reply_to: &'a [EmailAddress],
    pub to: &'a [EmailAddress],
    pub cc: &'a [EmailAddress],
    pub subject: &'a str,
    pub sender_authentication: Option<SenderAuthentication>,
    pub attachments: usize,
    pub message_id: &'a str,
}

impl Delivered<'_> {
    /// What its butlers judge.
    pub fn facts(&self) -> DeliveryFacts {
        DeliveryFacts {
            from: self.from.map(written).unwrap_or_default(),
            recipients: self.to.iter().chain(self.cc).map(written).collect(),
            subject: self.subject.to_string(),
            sender_authentication: self.sender_authentication,
            attachments: self.attachments,
            sender: self.from.cloned(),
            reply_to: self.reply_to.to_vec(),
        }
    }
}

/// The statement reading the active published butlers of the mailbox at
/// `address`, for the delivery's first round trip: their published rules,
/// pinned relations and what each sponsor holds there now, and what is around
/// the delivery that their effects meet (which assignees work the mailbox,
/// which mailboxes a copy would go to already hold the message, which of the
/// addresses a reply could go to are the node's own).
pub fn active_on_delivery(address: &str, delivered: &Delivered<'_>, now_ms: i64) -> Statement {
    let candidates: Vec<&EmailAddress> = delivered.reply_to.iter().chain(delivered.from).collect();
    let candidates = serde_json::to_string(&candidates).unwrap_or_else(|_| "[]".into());
    store::active_on_delivery(address, delivered.message_id, candidates, now_ms)
}

/// The statement carrying out `effect` on conversation `thread_id`, if it is a
/// change in the database. Judged to apply at the delivery's first read (the
/// assignee worked the mailbox then), as a person's change is at its route's.
fn carry_out(effect: &ButlerEffect, thread_id: &str) -> Option<Statement> {
    Some(match effect {
        ButlerEffect::SetStatus { status } => store::thread_status_set(thread_id, *status),
        // Posted once the delivery is stored (`post_webhooks`); a reply is a
        // send (`on_delivery`), a copy a receipt of its own (`file_copy`).
        ButlerEffect::NotifyWebhook { .. } | ButlerEffect::DraftReply { .. } | ButlerEffect::Forward { .. } => {
            return None;
        }
        ButlerEffect::Assign { assignee } => store::thread_assigned(thread_id, assignee),
        // Validated when the version was written; kept to the cap in SQL.
        ButlerEffect::Label { label } => labels::add_label(thread_id, &normalise_label(label)?),
    })
}

/// The statements filing `copy` of receipt `receipt_id` in the same database
/// (D1, both mailboxes' mail being there), in the delivery's batch. The copy
/// has its own original (`copy.raw_key`, stored before the batch) and joins the
/// conversation its Message-IDs name there or begins one. That the sponsor
/// reads the target and that it does not hold the message yet were judged at
/// the delivery's first read, and the first is held again in the insert; a
/// copy of the same message delivered there in between keeps the one it has.
fn filed_beside(copy: &CopyToFile, receipt_id: &str) -> Vec<Statement> {
    let insert = store::copy_filed(FiledCopy {
        copy_id: &copy.copy_id,
        original_id: receipt_id,
        target: &copy.target,
        subject_key: linking::subject_key(&copy.subject).0,
        new_thread_id: &copy.new_thread_id,
        butler_id: &copy.butler_id,
        sponsor_id: &copy.sponsor_id,
        raw_key: &copy.raw_key,
    });
    let mut statements = vec![insert];
    statements.extend(copy.indexed_and_in_its_conversation());
    statements
}

/// A copy a butler files in another mailbox: what it is, where it goes, and
/// the entry recording it, appended where the copy is written.
#[derive(Clone, Debug)]
pub struct CopyToFile {
    pub copy_id: String,
    /// The conversation it begins when its Message-IDs name none there.
    pub new_thread_id: String,
    /// The mailbox it is filed in, its address, and whether its mail is in its
    /// own database.
    pub target: String,
    pub target_address: String,
    pub target_moved: bool,
    /// The key of the target's copy of the original, stored before the copy.
    pub raw_key: String,
    pub butler_id: String,
    pub sponsor_id: String,
    pub subject: String,
    pub record: AuditRecord,
}

impl CopyToFile {
    /// The statements filing it where its target's mail is, as a change of
    /// its own after the delivery's (either mailbox's mail being in its own
    /// database): `insert`, the receipt written from the delivery's values
    /// (its id, mailbox, original, conversation and filer this copy's), then
    /// the conversation its Message-IDs name there, its index entries, and
    /// its place in the conversation. A target that already holds the
    /// message refuses the insert (its unique Message-ID), and the batch with
    /// it (`copy_already_held` records why). Whether the sponsor reads the
    /// target was judged on D1 at the delivery's first read.
    pub fn filed_after(&self, insert: Statement) -> Vec<Statement> {
        let mut statements = vec![
            insert,
            store::copy_threaded(&self.copy_id, linking::subject_key(&self.subject).0, &self.target_address),
        ];
        statements.extend(self.indexed_and_in_its_conversation());
        statements
    }

    /// Once its receipt is written: its index entries, and its place in the
    /// conversation its insert gave it (begun, or joined).
    fn indexed_and_in_its_conversation(&self) -> Vec<Statement> {
        let mut statements = index::indexed(&self.copy_id).to_vec();
        statements.extend(linking::file_into(&self.copy_id, &self.new_thread_id, &self.subject));
        statements
    }
}

/// `record`, an effect's entry, as the effect failed after it was judged to
/// run: its outcome `why`, now.
fn failed(record: &AuditRecord, why: &str, platform: &dyn Platform) -> AuditRecord {
    let detail =
        record.detail.as_deref().and_then(|detail| serde_json::from_str::<serde_json::Value>(detail).ok()).map(
            |mut detail| {
                detail["outcome"] = why.into();
                detail.to_string()
            },
        );
    AuditRecord { at: platform.now_ms(), outcome: "failed", detail, ..record.clone() }
}

/// A webhook a butler posts once the delivery is stored, with what its
/// failure would be recorded as.
#[derive(Clone, Debug)]
pub struct WebhookPost {
    pub butler_id: String,
    pub url: String,
    /// The JSON body.
    pub body: String,
    /// The audit entry of the effect, whose outcome a failure replaces.
    record: AuditRecord,
    /// The butler's sponsor, told when the post fails.
    sponsor_id: String,
    mailbox_id: String,
    thread_id: String,
    subject: String,
}

/// What the delivery's butlers do.
#[derive(Debug, Default)]
pub struct ButlerWork {
    /// Changes where the message is stored, in the batch that stores it.
    pub statements: Vec<Statement>,
    /// Changes in the directory (notices, the note of a reply awaiting its
    /// decision): in the delivery's batch on D1, after it when the mailbox's
    /// mail is in its own database.
    pub on_d1: Vec<Statement>,
    /// The audit records of each effect run or skipped, appended where the
    /// message is stored (a copy filed after carries its own).
    pub records: Vec<AuditRecord>,
    /// Copies filed in other mailboxes: each has its own original, stored
    /// before the batch; those in `statements` are filed beside the delivery,
    /// the others after it, each a change of its own (`after`).
    pub copies: Vec<CopyToFile>,
    /// How many of `copies`, first, are filed in the delivery's batch.
    pub copies_beside: usize,
    /// Webhooks to post once it is stored.
    pub posts: Vec<WebhookPost>,
}

impl ButlerWork {
    /// The copies filed after the delivery, each a change of its own.
    pub fn copies_after(&self) -> &[CopyToFile] {
        &self.copies[self.copies_beside..]
    }
}

/// Posts each of `posts`, signed with its butler's secret derived from the
/// node's session key: one attempt each, several at once, each within its time
/// and only where `core::outbound`'s rule allows now (an address stored before
/// the rule is refused here). The delivery stands either way. What failed is
/// answered as the work that records it: an audit entry of the effect failed,
/// with why, and a notice in its sponsor's feed (nothing when all went).
pub async fn post_webhooks(posts: &[WebhookPost], node: &Node<'_>) -> ButlerWork {
    let policy = node.config.outbound_policy();
    let outcomes = outbound::each_at_once(posts, |post| post_webhook(post, node, &policy)).await;
    let platform = node.platform;
    let mut failures = ButlerWork::default();
    for (post, outcome) in posts.iter().zip(outcomes) {
        let Err(error) = outcome else { continue };
        let why = format!("failed: {error}; it is not posted again");
        platform.log(&format!("butler {}: its webhook {why}", post.butler_id));
        let notice = Notice {
            kind: NotificationKind::ButlerEffectSkipped,
            object_id: &post.thread_id,
            mailbox_id: Some(&post.mailbox_id),
            actor: Some(&post.butler_id),
            title: &post.subject,
            detail: Some(&why),
        };
        failures.on_d1.push(notifications::notify(&notice, Addressee::PersonOf(&post.sponsor_id), platform));
        failures.records.push(failed(&post.record, &why, platform));
    }
    failures
}

/// The entry of `copy`'s effect skipped because its target already holds the
/// message (found as the copy was written): kept, told to nobody, in the
/// words a delivery's judgement uses.
pub fn copy_already_held(copy: &CopyToFile, platform: &dyn Platform) -> AuditRecord {
    let why = format!("skipped: mailbox {} already holds this message, and keeps the one it has", copy.target);
    AuditRecord { outcome: "skipped", ..failed(&copy.record, &why, platform) }
}

/// What records a copy (`copy`) that could not be filed once the delivery
/// was stored (`error` says why): its effect's entry, failed, on D1, and a
/// notice in its sponsor's feed, as a failed webhook is recorded.
pub fn copy_not_filed(copy: &CopyToFile, error: &str, platform: &dyn Platform) -> ButlerWork {
    let why = format!("failed: the copy could not be filed ({error}); it is not filed again");
    let notice = Notice {
        kind: NotificationKind::ButlerEffectSkipped,
        object_id: &copy.target,
        mailbox_id: Some(&copy.target),
        actor: Some(&copy.butler_id),
        title: &copy.subject,
        detail: Some(&why),
    };
    ButlerWork {
        on_d1: vec![notifications::notify(&notice, Addressee::PersonOf(&copy.sponsor_id), platform)],
        records: vec![failed(&copy.record, &why, platform)],
        ..ButlerWork::default()
    }
}

/// One butler's post, where `policy` allows it now, within its time.
async fn post_webhook(post: &WebhookPost, node: &Node<'_>, policy: &OutboundPolicy) -> Result<(), Undelivered> {
    let secret = crate::core::webhooks::derived_secret(&node.config.session_key, &post.butler_id);
    let signature = crate::core::webhooks::signature(&secret, node.platform.now_ms(), &post.body);
    let headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("mailroom-signature".to_string(), signature),
    ];
    let url = &post.url;
    let post = Post {
        url,
        maximum_url_bytes: butler_limits::WEBHOOK_URL_BYTES,
        receiver: url,
        headers: &headers,
        body: &post.body,
    };
    delivery::post_within(node.webhooks, node.platform, policy, post).await
}

/// What a reply to the delivery is threaded by.
pub struct ReplyBasis<'a> {
    pub message_id: &'a str,
    /// The delivery's In-Reply-To: a reply's References begin with it when the
    /// delivery has no References (RFC 5322 §3.6.4).
    pub in_reply_to: &'a [String],
    pub references: &'a [String],
}

/// Where the delivery was stored: its receipt, and the conversation it joined
/// in its mailbox, as that stood before it.
pub struct StoredIn<'a> {
    pub receipt_id: &'a str,
    pub thread_id: &'a str,
    pub mailbox_id: &'a str,
    pub conversation: &'a Conversation,
    /// The mailbox's mail is in its own database (decision 0040), not D1.
    pub in_own_database: bool,
}

/// What the delivery's butlers do to the message stored as `stored`.
pub fn on_delivery(
    butlers: &QueryResult,
    facts: &DeliveryFacts,
    reply: &ReplyBasis<'_>,
    stored: &StoredIn<'_>,
    platform: &dyn Platform,
) -> ButlerWork {
    let StoredIn { receipt_id, thread_id, mailbox_id, conversation, in_own_database } = *stored;
    let now_ms = platform.now_ms();
    let mut work = ButlerWork::default();
    let ButlerWork { statements, on_d1, records, posts, .. } = &mut work;
    let (mut copies_beside, mut copies_after) = (Vec::new(), Vec::new());
    let active: Vec<store::ActiveButler> = butlers.decode_all().unwrap_or_default();
    // The conversation's subject, as a person assigned it would read it.
    let conversation_subject = conversation.subject.clone().unwrap_or_else(|| facts.subject.clone());
    let mut around = surroundings::surroundings(conversation, &butlers.rows);
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
        let authority = SponsorAuthority { held_now: &held_now, pinned: Some(&pinned), elsewhere: &elsewhere };
        let targets: BTreeMap<String, Target> =
            butler.targets.as_deref().and_then(|json| serde_json::from_str(json).ok()).unwrap_or_default();
        let mut judged = judge(&rules, facts, &authority, &mut around);
        if judged.matched {
            for verdict in &mut judged.verdicts {
                let effect = verdict.judged.effect.clone();
                let mut forwarded = None;
                if verdict.skipped.is_none() {
                    match &effect {
                        ButlerEffect::DraftReply { .. } => {
                            let drafted = sends::ButlerReply {
                                mailbox_id,
                                thread_id,
                                receipt_id,
                                sponsor: &butler.sponsor_id,
                                to: &verdict.reply_to,
                                subject: &facts.subject,
                                text: verdict.reply_text.clone(),
                                message_id: reply.message_id,
                                in_reply_to: reply.in_reply_to,
                                references: reply.references,
                            };
                            match sends::submitted_for_butler(&drafted, platform) {
                                Some(submission) => {
                                    statements.extend(submission.in_mailbox);
                                    on_d1.extend(submission.on_d1);
                                    verdict.judged.outcome =
                                        format!("{}: {}", verdict.judged.outcome, submission.send_id);
                                }
                                // Judged writable, so this is a check the judgement does not make yet.
                                None => {
                                    verdict.skipped = Some(Skipped::CouldNotApply);
                                    verdict.judged.would_run = false;
                                    verdict.judged.outcome = "skipped: the reply could not be written as a send".into();
                                }
                            }
                        }
                        ButlerEffect::Forward { mailbox } => {
                            let copy_id = new_id(IdKind::Receipt, platform);
                            verdict.judged.outcome = format!("{}: {copy_id}", verdict.judged.outcome);
                            forwarded = Some((copy_id, mailbox.clone()));
                        }
                        // A person newly given the conversation hears of it, in the
                        // words `update_thread` tells them with, the butler named
                        // as who assigned it.
                        ButlerEffect::Assign { assignee } if is_id_of(assignee, IdKind::Person) => {
                            let notice = Notice {
                                kind: NotificationKind::ConversationAssigned,
                                object_id: thread_id,
                                mailbox_id: Some(mailbox_id),
                                actor: Some(&butler.id),
                                title: &conversation_subject,
                                detail: None,
                            };
                            on_d1.push(notifications::notify(&notice, Addressee::PersonOf(assignee), platform));
                        }
                        _ => {}
                    }
                }
                if verdict.skipped.is_none() {
                    statements.extend(carry_out(&effect, thread_id));
                } else if verdict.skipped == Some(Skipped::CouldNotApply) {
                    let notice = Notice {
                        kind: NotificationKind::ButlerEffectSkipped,
                        object_id: thread_id,
                        mailbox_id: Some(mailbox_id),
                        actor: Some(&butler.id),
                        title: &facts.subject,
                        detail: Some(&verdict.judged.outcome),
                    };
                    on_d1.push(notifications::notify(&notice, Addressee::PersonOf(&butler.sponsor_id), platform));
                }
                let record = AuditRecord {
                    at: now_ms,
                    actor: Some(butler.id.clone()),
                    delegator: Some(butler.sponsor_id.clone()),
                    surface: Some("email"),
                    action: "butler_effect".into(),
                    object: Some(thread_id.to_string()),
                    outcome: if verdict.skipped.is_none() { "ok" } else { "skipped" },
                    detail: Some(
                        serde_json::json!({
                            "butler": butler.id,
                            "version": butler.version,
                            "receipt": receipt_id,
                            "effect": effect,
                            "outcome": verdict.judged.outcome,
                        })
                        .to_string(),
                    ),
                    topic: Some(Topic::Mailbox(mailbox_id.to_string())),
                };
                if let (None, ButlerEffect::NotifyWebhook { url }) = (verdict.skipped, &effect) {
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
                    posts.push(WebhookPost {
                        butler_id: butler.id.clone(),
                        url: url.clone(),
                        body: body.to_string(),
                        record: record.clone(),
                        sponsor_id: butler.sponsor_id.clone(),
                        mailbox_id: mailbox_id.to_string(),
                        thread_id: thread_id.to_string(),
                        subject: facts.subject.clone(),
                    });
                }
                // A copy is recorded where it is written: beside the delivery
                // when both mailboxes' mail is in D1, after it otherwise.
                let Some((copy_id, mailbox)) = forwarded else {
                    records.push(record);
                    continue;
                };
                let target = targets.get(&mailbox).cloned().unwrap_or(Target { address: String::new(), moved: false });
                let copy = CopyToFile {
                    raw_key: originals::raw_message_key(&mailbox, &copy_id),
                    copy_id,
                    new_thread_id: new_id(IdKind::Thread, platform),
                    target: mailbox,
                    target_address: target.address,
                    target_moved: target.moved,
                    butler_id: butler.id.clone(),
                    sponsor_id: butler.sponsor_id.clone(),
                    subject: facts.subject.clone(),
                    record,
                };
                if in_own_database || copy.target_moved {
                    copies_after.push(copy);
                } else {
                    statements.extend(filed_beside(&copy, receipt_id));
                    records.push(copy.record.clone());
                    copies_beside.push(copy);
                }
            }
        }
        // The run's record, with every effect as it went (after a reply or a
        // copy, with the send or the receipt it wrote).
        let run = Run {
            butler_id: &butler.id,
            receipt_id,
            version: butler.version,
            at: now_ms,
            matched: judged.matched,
            outcome_json: serde_json::json!({ "conditions": judged.conditions, "effects": judged.effects() })
                .to_string(),
        };
        statements.push(store::run_recorded(run).statement());
    }
    work.copies_beside = copies_beside.len();
    work.copies = copies_beside.into_iter().chain(copies_after).collect();
    work
}
