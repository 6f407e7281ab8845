//! Judging a butler's version against one delivery, with no storage and no
//! clock: which conditions hold, and, for each effect, whether it would change
//! something or why it would be skipped. The dry run answers this judgement; a
//! delivery acts on it and records it, so an effect is recorded as done only
//! when this judgement found it could be: its sponsor's authority allowed it
//! and what it acts on (the assignee, the conversation, the other mailbox, the
//! address a reply goes to) let it apply.

use std::collections::{BTreeMap, BTreeSet};

use mailroom_contract::Relation;
use mailroom_contract::api::label_limits::LABELS_PER_CONVERSATION;
use mailroom_contract::api::normalise_label;
use mailroom_contract::api::{
    ButlerCondition, ButlerEffect, ButlerRules, ConditionJudged, EffectJudged, EmailAddress, SenderAuthentication,
};

use crate::core::addresses;
use crate::mail::sends;

/// What a butler can see of a delivery: its headers, never its text.
#[derive(Clone, Debug, Default)]
pub struct DeliveryFacts {
    /// The sender's address and name, as `Name <address>` or the address alone.
    pub from: String,
    /// Every To and Cc recipient, written as `from` is.
    pub recipients: Vec<String>,
    pub subject: String,
    pub sender_authentication: Option<SenderAuthentication>,
    pub attachments: usize,
    /// The From header's address, which a reply falls back to.
    pub sender: Option<EmailAddress>,
    /// The Reply-To header's addresses, where a reply goes first.
    pub reply_to: Vec<EmailAddress>,
}

/// What a sponsor holds now on the other mailboxes a version's effects reach,
/// by mailbox id; a mailbox that is not one of the node's is absent.
pub type HeldElsewhere = BTreeMap<String, Vec<Relation>>;

/// What the sponsor holds elsewhere as SQL answers it (a JSON object of
/// comma-separated relations by mailbox id), read.
pub(super) fn held_elsewhere_of(json: Option<&str>) -> HeldElsewhere {
    let by_mailbox: BTreeMap<String, String> =
        json.and_then(|json| serde_json::from_str(json).ok()).unwrap_or_default();
    by_mailbox.into_iter().map(|(mailbox, names)| (mailbox, relations(names.split(',')))).collect()
}

/// The relations named in `names`, skipping any the node does not know.
pub(super) fn relations<'name>(names: impl IntoIterator<Item = &'name str>) -> Vec<Relation> {
    names.into_iter().filter_map(Relation::parse).collect()
}

/// The authority a version's effects run with: its sponsor's relations on the
/// mailbox now, those pinned when it was published (none for a draft, judged by
/// what is held now), and what the sponsor holds on the other mailboxes its
/// effects reach.
#[derive(Clone, Copy, Debug)]
pub struct SponsorAuthority<'a> {
    pub held_now: &'a [Relation],
    pub pinned: Option<&'a [Relation]>,
    pub elsewhere: &'a HeldElsewhere,
}

/// What the node holds around a delivery when it is judged, beyond the
/// sponsor's authority: read in the same round trip as the butlers (a delivery)
/// or the butler (a dry run), and moved on by each effect judged to run, so a
/// later effect (of the same butler or the next) meets what an earlier one did.
#[derive(Clone, Debug, Default)]
pub struct Surroundings {
    /// The assignee of the conversation the delivery joins (none for a new one).
    pub assignee: Option<String>,
    /// The labels that conversation carries, as kept (normalised).
    pub labels: BTreeSet<String>,
    /// Of the assignees the versions name, those who work the mailbox now: hold
    /// send.propose there (an agent only with its sponsor and while live), as a
    /// person assigning the conversation by hand requires.
    pub working: BTreeSet<String>,
    /// Of the addresses a reply could go to, those that are this node's own
    /// mailboxes (lower-case).
    pub own_addresses: BTreeSet<String>,
    /// Of the other mailboxes the versions file copies in, those that already
    /// hold a message with the delivery's Message-ID.
    pub holding_the_message: BTreeSet<String>,
}

/// Why an effect is not carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skipped {
    /// A condition did not hold: nothing of the version applies.
    NotMatched,
    /// It could not apply: the sponsor's authority, the assignee, the address
    /// or the conversation did not allow it. Its sponsor is told.
    CouldNotApply,
    /// What it would do is already so: nothing to change, nobody to tell.
    AlreadySo,
}

/// One effect of a version, judged.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub judged: EffectJudged,
    /// Why it does not run, if it does not.
    pub skipped: Option<Skipped>,
    /// For a reply that runs: whom it is addressed to.
    pub reply_to: Vec<EmailAddress>,
    /// For a reply that runs: its text with `{sender}` and `{subject}` filled in.
    pub reply_text: String,
}

/// A version judged against a delivery.
#[derive(Clone, Debug)]
pub struct Judgement {
    /// Whether every condition held.
    pub matched: bool,
    pub conditions: Vec<ConditionJudged>,
    pub verdicts: Vec<Verdict>,
}

impl Judgement {
    /// The effects, as the dry run and a delivery's run record show them.
    pub fn effects(&self) -> Vec<EffectJudged> {
        self.verdicts.iter().map(|verdict| verdict.judged.clone()).collect()
    }

    /// The effects that run, in order.
    #[cfg(test)]
    pub fn running(&self) -> impl Iterator<Item = &ButlerEffect> {
        self.verdicts.iter().filter(|verdict| verdict.skipped.is_none()).map(|verdict| &verdict.judged.effect)
    }

    /// The effects that could not apply, with why.
    #[cfg(test)]
    pub fn could_not_apply(&self) -> impl Iterator<Item = &EffectJudged> {
        self.verdicts
            .iter()
            .filter(|verdict| verdict.skipped == Some(Skipped::CouldNotApply))
            .map(|verdict| &verdict.judged)
    }
}

fn contains(haystack: &str, needle: &str) -> bool {
    haystack.to_lowercase().contains(&needle.to_lowercase())
}

fn judge_condition(condition: &ButlerCondition, facts: &DeliveryFacts) -> ConditionJudged {
    let (matched, found) = match condition {
        ButlerCondition::From { contains: text } => (contains(&facts.from, text), facts.from.clone()),
        ButlerCondition::Recipients { contains: text } => {
            (facts.recipients.iter().any(|recipient| contains(recipient, text)), facts.recipients.join(", "))
        }
        ButlerCondition::Subject { contains: text } => (contains(&facts.subject, text), facts.subject.clone()),
        ButlerCondition::SenderAuthentication { is } => (
            facts.sender_authentication.unwrap_or(SenderAuthentication::Unverified) == *is,
            facts.sender_authentication.unwrap_or(SenderAuthentication::Unverified).name().to_string(),
        ),
        ButlerCondition::Attachments { is } => ((facts.attachments > 0) == *is, facts.attachments.to_string()),
    };
    ConditionJudged { condition: condition.clone(), matched, found }
}

/// What an effect does, in words.
fn describe(effect: &ButlerEffect) -> String {
    match effect {
        ButlerEffect::SetStatus { status } => format!("sets the conversation's status to {}", status.name()),
        ButlerEffect::Assign { assignee } => format!("assigns the conversation to {assignee}"),
        ButlerEffect::DraftReply { .. } => {
            "drafts a reply to the sender and submits it for a second person's approval, in its sponsor's name".into()
        }
        ButlerEffect::NotifyWebhook { url } => {
            format!("posts the message's sender, recipients and subject to {url} once the message is stored")
        }
        ButlerEffect::Forward { mailbox } => format!("files a copy of the message in mailbox {mailbox}"),
        ButlerEffect::Label { label } => format!("labels the conversation “{}”", label_as_kept(label)),
    }
}

fn label_as_kept(label: &str) -> String {
    normalise_label(label).unwrap_or_else(|| label.to_string())
}

/// Where a reply to the delivery goes: its Reply-To, or without one its From,
/// leaving out every address that is one of this node's mailboxes (a reply
/// there would be delivered straight back, where a butler may answer it
/// again). A Reply-To naming only the node's own mailboxes falls back to the
/// From. Empty, with the own addresses it left out, when nothing is left.
fn reply_addresses(facts: &DeliveryFacts, own: &BTreeSet<String>) -> (Vec<EmailAddress>, Vec<String>) {
    let mut left_out = Vec::new();
    let mut outside = |addresses: &[EmailAddress]| -> Vec<EmailAddress> {
        addresses
            .iter()
            .filter(|address| {
                let normalised =
                    addresses::normalize(&address.address).unwrap_or_else(|| address.address.to_lowercase());
                let is_own = own.contains(&normalised);
                if is_own && !left_out.contains(&normalised) {
                    left_out.push(normalised);
                }
                !is_own
            })
            .cloned()
            .collect()
    };
    let replying_to = outside(&facts.reply_to);
    let addressed = if replying_to.is_empty() { outside(facts.sender.as_slice()) } else { replying_to };
    (addressed, left_out)
}

/// Why an effect the sponsor may authorise cannot apply to this delivery, or
/// what it would do is already so; `None` when it applies. A reply's
/// addresses and text are written into `verdict`.
fn applies(
    effect: &ButlerEffect,
    facts: &DeliveryFacts,
    around: &Surroundings,
    verdict: &mut Verdict,
) -> Option<(Skipped, String)> {
    match effect {
        ButlerEffect::SetStatus { .. } | ButlerEffect::NotifyWebhook { .. } => None,
        ButlerEffect::Assign { assignee } => {
            if !around.working.contains(assignee) {
                Some((
                    Skipped::CouldNotApply,
                    format!(
                        "skipped: {assignee} does not work the mailbox now (holds no send.propose there, or is not an enabled person or a live agent), so cannot be assigned the conversation"
                    ),
                ))
            } else if around.assignee.as_deref() == Some(assignee.as_str()) {
                Some((Skipped::AlreadySo, format!("skipped: the conversation is already assigned to {assignee}")))
            } else {
                None
            }
        }
        ButlerEffect::Label { label } => {
            let label = label_as_kept(label);
            if around.labels.contains(&label) {
                Some((Skipped::AlreadySo, format!("skipped: the conversation already carries “{label}”")))
            } else if around.labels.len() >= LABELS_PER_CONVERSATION {
                Some((
                    Skipped::CouldNotApply,
                    format!(
                        "skipped: the conversation already carries {} labels, the most it may, so “{label}” was not added",
                        around.labels.len()
                    ),
                ))
            } else {
                None
            }
        }
        ButlerEffect::Forward { mailbox } => around.holding_the_message.contains(mailbox).then(|| {
            (
                Skipped::AlreadySo,
                format!("skipped: mailbox {mailbox} already holds this message, and keeps the one it has"),
            )
        }),
        ButlerEffect::DraftReply { text } => {
            let (to, left_out) = reply_addresses(facts, &around.own_addresses);
            if to.is_empty() {
                let why = if left_out.is_empty() {
                    "the message names no address a reply could go to".to_string()
                } else {
                    format!(
                        "the only address a reply could go to is this node's own ({}), and a reply there would come straight back",
                        left_out.join(", ")
                    )
                };
                return Some((Skipped::CouldNotApply, format!("skipped: {why}")));
            }
            let filled = text.replace("{sender}", &facts.from).replace("{subject}", &facts.subject);
            if let Some(why) = sends::butler_reply_unwritable(&to, &facts.subject, &filled) {
                return Some((Skipped::CouldNotApply, format!("skipped: {why}")));
            }
            verdict.reply_to = to;
            verdict.reply_text = filled;
            None
        }
    }
}

/// What running `effect` changes around the delivery, for the effects after it.
fn apply(effect: &ButlerEffect, around: &mut Surroundings) {
    match effect {
        ButlerEffect::Assign { assignee } => around.assignee = Some(assignee.clone()),
        ButlerEffect::Label { label } => {
            around.labels.insert(label_as_kept(label));
        }
        ButlerEffect::Forward { mailbox } => {
            around.holding_the_message.insert(mailbox.clone());
        }
        ButlerEffect::SetStatus { .. } | ButlerEffect::DraftReply { .. } | ButlerEffect::NotifyWebhook { .. } => {}
    }
}

/// Why the sponsor's authority does not allow `effect`, if it does not: it
/// runs only with what was pinned (for a published version) and is still held,
/// and with what the sponsor holds now on another mailbox it reaches.
fn unauthorised(effect: &ButlerEffect, authority: &SponsorAuthority<'_>) -> Option<String> {
    if let Some(relation) =
        authority.pinned.and_then(|pinned| effect.requires().iter().find(|relation| !pinned.contains(relation)))
    {
        return Some(format!(
            "skipped: its sponsor did not hold {} on the mailbox when this version was published",
            relation.name()
        ));
    }
    if let Some(relation) = effect.requires().iter().find(|relation| !authority.held_now.contains(relation)) {
        return Some(format!("skipped: its sponsor no longer holds {} on the mailbox", relation.name()));
    }
    let (mailbox, required) = effect.requires_elsewhere()?;
    let held = authority.elsewhere.get(mailbox).map(Vec::as_slice).unwrap_or_default();
    required.iter().find(|relation| !held.contains(relation)).map(|relation| {
        format!(
            "skipped: its sponsor does not hold {} on mailbox {mailbox}, or it is no longer a mailbox of this node",
            relation.name()
        )
    })
}

/// Judges `rules` against `facts` with the sponsor's `authority`, each effect
/// in order against what is `around` the delivery, which an effect judged to
/// run moves on.
pub fn judge(
    rules: &ButlerRules,
    facts: &DeliveryFacts,
    authority: &SponsorAuthority<'_>,
    around: &mut Surroundings,
) -> Judgement {
    let conditions: Vec<ConditionJudged> =
        rules.conditions.iter().map(|condition| judge_condition(condition, facts)).collect();
    let matched = conditions.iter().all(|condition| condition.matched);
    let verdicts = rules
        .effects
        .iter()
        .map(|effect| {
            let mut verdict = Verdict {
                judged: EffectJudged { effect: effect.clone(), would_run: false, outcome: String::new() },
                skipped: None,
                reply_to: Vec::new(),
                reply_text: String::new(),
            };
            let skipped = if !matched {
                Some((Skipped::NotMatched, format!("would not run: a condition did not hold; it {}", describe(effect))))
            } else if let Some(why) = unauthorised(effect, authority) {
                Some((Skipped::CouldNotApply, why))
            } else {
                applies(effect, facts, around, &mut verdict)
            };
            match skipped {
                Some((skipped, outcome)) => {
                    verdict.skipped = Some(skipped);
                    verdict.judged.outcome = outcome;
                }
                None => {
                    apply(effect, around);
                    verdict.judged.would_run = true;
                    verdict.judged.outcome = describe(effect);
                }
            }
            verdict
        })
        .collect();
    Judgement { matched, conditions, verdicts }
}

#[cfg(test)]
mod tests {
    use mailroom_contract::api::ThreadStatus;

    use super::*;

    fn facts() -> DeliveryFacts {
        let ana = EmailAddress { address: "ana@customer.example".into(), name: Some("Ana".into()) };
        DeliveryFacts {
            from: "Ana <ana@customer.example>".into(),
            recipients: vec!["Support <support@mailroom.test>".into()],
            subject: "Invoice 4471 overdue".into(),
            sender_authentication: Some(SenderAuthentication::Authenticated),
            attachments: 1,
            sender: Some(ana),
            reply_to: Vec::new(),
        }
    }

    const WORKS: &[Relation] = &[Relation::MailboxMetadataRead, Relation::SendPropose];

    fn authority<'a>(held_now: &'a [Relation], pinned: Option<&'a [Relation]>) -> SponsorAuthority<'a> {
        static NOWHERE: std::sync::LazyLock<HeldElsewhere> = std::sync::LazyLock::new(HeldElsewhere::new);
        SponsorAuthority { held_now, pinned, elsewhere: &NOWHERE }
    }

    fn around() -> Surroundings {
        Surroundings { working: BTreeSet::from(["usr_01".to_string()]), ..Surroundings::default() }
    }

    #[test]
    fn every_condition_must_hold_and_text_matches_ignore_case() {
        let rules = ButlerRules {
            conditions: vec![
                ButlerCondition::Subject { contains: "INVOICE".into() },
                ButlerCondition::From { contains: "customer.example".into() },
                ButlerCondition::Attachments { is: true },
            ],
            effects: vec![ButlerEffect::SetStatus { status: ThreadStatus::Waiting }],
        };
        let judged = judge(&rules, &facts(), &authority(WORKS, Some(WORKS)), &mut around());
        assert!(judged.matched);
        assert_eq!(judged.running().count(), 1);
        let mut other = facts();
        other.sender_authentication = None;
        let rules = ButlerRules {
            conditions: vec![ButlerCondition::SenderAuthentication { is: SenderAuthentication::Authenticated }],
            ..rules
        };
        let judged = judge(&rules, &other, &authority(WORKS, Some(WORKS)), &mut around());
        assert!(!judged.matched);
        assert_eq!(judged.conditions[0].found, "unverified");
        assert_eq!(judged.running().count(), 0);
        assert_eq!(judged.could_not_apply().count(), 0, "not matching is not skipping");
    }

    #[test]
    fn an_effect_runs_only_with_what_was_pinned_and_is_still_held() {
        let rules =
            ButlerRules { conditions: vec![], effects: vec![ButlerEffect::Assign { assignee: "usr_01".into() }] };
        let lost = judge(&rules, &facts(), &authority(&[Relation::MailboxMetadataRead], Some(WORKS)), &mut around());
        assert!(lost.verdicts[0].judged.outcome.contains("no longer holds send.propose"), "{:?}", lost.verdicts);
        // Granted since publishing: a published version never widens.
        let widened = judge(&rules, &facts(), &authority(WORKS, Some(&[Relation::MailboxMetadataRead])), &mut around());
        assert!(
            widened.verdicts[0].judged.outcome.contains("when this version was published"),
            "{:?}",
            widened.verdicts
        );
        assert_eq!(widened.could_not_apply().count(), 1);
        assert_eq!(
            judge(&rules, &facts(), &authority(WORKS, None), &mut around()).running().count(),
            1,
            "a draft is judged by what is held now"
        );
    }

    #[test]
    fn a_copy_needs_the_sponsor_to_read_the_other_mailbox_as_well() {
        let rules =
            ButlerRules { conditions: vec![], effects: vec![ButlerEffect::Forward { mailbox: "mbx_02".into() }] };
        let reads: &[Relation] = &[Relation::MailboxMetadataRead, Relation::MailboxContentRead];
        let unread = judge(&rules, &facts(), &authority(reads, Some(reads)), &mut around());
        let outcome = &unread.verdicts[0].judged.outcome;
        assert!(outcome.contains("mailbox.content.read on mailbox mbx_02"), "{outcome}");
        let there = HeldElsewhere::from([("mbx_02".to_string(), vec![Relation::MailboxContentRead])]);
        let allowed = SponsorAuthority { held_now: reads, pinned: Some(reads), elsewhere: &there };
        assert_eq!(judge(&rules, &facts(), &allowed, &mut around()).running().count(), 1);
        // Reading the other mailbox never stands in for reading this one.
        let blind = SponsorAuthority { held_now: WORKS, pinned: Some(WORKS), elsewhere: &there };
        let blind = judge(&rules, &facts(), &blind, &mut around());
        assert!(blind.verdicts[0].judged.outcome.contains("mailbox.content.read on the mailbox when"), "{blind:?}");
        // A mailbox that already holds the message keeps its own: nothing to do.
        let mut holding = Surroundings { holding_the_message: BTreeSet::from(["mbx_02".into()]), ..around() };
        let held = judge(&rules, &facts(), &allowed, &mut holding);
        assert_eq!(held.verdicts[0].skipped, Some(Skipped::AlreadySo));
        assert!(held.verdicts[0].judged.outcome.contains("already holds this message"), "{held:?}");
    }

    /// Each kind of effect that can meet something it cannot change says so,
    /// as a skip with its reason, never as done.
    #[test]
    fn an_effect_that_cannot_apply_is_skipped_with_its_reason() {
        let check = |effect: ButlerEffect, around: &mut Surroundings, skipped: Option<Skipped>, words: &str| {
            let rules = ButlerRules { conditions: vec![], effects: vec![effect] };
            let judged = judge(&rules, &facts(), &authority(WORKS, Some(WORKS)), around);
            let verdict = &judged.verdicts[0];
            assert_eq!(verdict.skipped, skipped, "{verdict:?}");
            assert_eq!(verdict.judged.would_run, skipped.is_none(), "{verdict:?}");
            assert!(verdict.judged.outcome.contains(words), "{verdict:?}");
        };
        let assign = |who: &str| ButlerEffect::Assign { assignee: who.into() };
        check(assign("usr_02"), &mut around(), Some(Skipped::CouldNotApply), "usr_02 does not work the mailbox");
        let mut assigned = Surroundings { assignee: Some("usr_01".into()), ..around() };
        check(assign("usr_01"), &mut assigned, Some(Skipped::AlreadySo), "already assigned to usr_01");
        check(assign("usr_01"), &mut around(), None, "assigns the conversation to usr_01");

        let label = |label: &str| ButlerEffect::Label { label: label.into() };
        let mut labelled = Surroundings { labels: BTreeSet::from(["billing".into()]), ..around() };
        check(label(" Billing "), &mut labelled, Some(Skipped::AlreadySo), "already carries “billing”");
        let mut full =
            Surroundings { labels: (0..LABELS_PER_CONVERSATION).map(|n| format!("l{n}")).collect(), ..around() };
        check(label("billing"), &mut full, Some(Skipped::CouldNotApply), "the most it may");
        check(label("billing"), &mut around(), None, "labels the conversation");

        let reply = ButlerEffect::DraftReply { text: "Thanks, {sender}.".into() };
        check(reply.clone(), &mut around(), None, "drafts a reply");
        let mut own = Surroundings { own_addresses: BTreeSet::from(["ana@customer.example".into()]), ..around() };
        check(reply, &mut own, Some(Skipped::CouldNotApply), "this node's own (ana@customer.example)");
    }

    #[test]
    fn a_later_effect_meets_what_an_earlier_one_did() {
        let rules = ButlerRules {
            conditions: vec![],
            effects: vec![
                ButlerEffect::Label { label: "billing".into() },
                ButlerEffect::Label { label: "BILLING".into() },
                ButlerEffect::Assign { assignee: "usr_01".into() },
                ButlerEffect::Assign { assignee: "usr_01".into() },
            ],
        };
        let mut room =
            Surroundings { labels: (1..LABELS_PER_CONVERSATION).map(|n| format!("l{n}")).collect(), ..around() };
        let judged = judge(&rules, &facts(), &authority(WORKS, Some(WORKS)), &mut room);
        let skipped: Vec<_> = judged.verdicts.iter().map(|verdict| verdict.skipped).collect();
        assert_eq!(skipped, [None, Some(Skipped::AlreadySo), None, Some(Skipped::AlreadySo)]);
        // The one place left is taken: the next butler's label is refused by the cap.
        let next = ButlerRules { conditions: vec![], effects: vec![ButlerEffect::Label { label: "urgent".into() }] };
        let judged = judge(&next, &facts(), &authority(WORKS, Some(WORKS)), &mut room);
        assert_eq!(judged.verdicts[0].skipped, Some(Skipped::CouldNotApply), "{judged:?}");
    }

    #[test]
    fn a_reply_never_goes_to_the_nodes_own_mailboxes() {
        let support = EmailAddress { address: "Support@Mailroom.test".into(), name: None };
        let billing = EmailAddress { address: "billing@mailroom.test".into(), name: None };
        let ana = EmailAddress { address: "ana@customer.example".into(), name: None };
        let own = BTreeSet::from(["support@mailroom.test".to_string(), "billing@mailroom.test".to_string()]);
        let mut facts = facts();
        // A Reply-To naming only the node's own mailboxes falls back to the From.
        facts.reply_to = vec![support.clone(), billing.clone()];
        let (to, left_out) = reply_addresses(&facts, &own);
        assert_eq!(to, facts.sender.clone().into_iter().collect::<Vec<_>>());
        assert_eq!(left_out, ["support@mailroom.test", "billing@mailroom.test"]);
        // One outside address among them is kept alone.
        facts.reply_to = vec![support.clone(), ana.clone()];
        assert_eq!(reply_addresses(&facts, &own).0, [ana]);
        // Sent from the mailbox itself, with no other address: nothing is left.
        facts.reply_to = vec![support.clone()];
        facts.sender = Some(support);
        assert!(reply_addresses(&facts, &own).0.is_empty());
    }
}
