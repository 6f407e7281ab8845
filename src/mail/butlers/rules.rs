//! Judging a butler's version against one delivery, with no storage and no
//! clock: which conditions hold, and which effects its sponsor's authority
//! allows. The dry run answers this judgement; a delivery acts on it.

use std::collections::BTreeMap;

use mailroom_contract::Relation;
use mailroom_contract::api::normalise_label;
use mailroom_contract::api::{
    ButlerCondition, ButlerEffect, ButlerRules, ConditionJudged, EffectJudged, SenderAuthentication,
};

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
}

/// What a sponsor holds now on the other mailboxes a version's effects reach,
/// by mailbox id; a mailbox that is not one of the node's is absent.
pub type HeldElsewhere = BTreeMap<String, Vec<Relation>>;

/// A version judged against a delivery.
#[derive(Clone, Debug)]
pub struct Judgement {
    /// Whether every condition held.
    pub matched: bool,
    pub conditions: Vec<ConditionJudged>,
    pub effects: Vec<EffectJudged>,
}

#[cfg(test)]
impl Judgement {
    /// The effects that run, in order.
    pub fn running(&self) -> impl Iterator<Item = &ButlerEffect> {
        self.effects.iter().filter(|effect| effect.would_run).map(|effect| &effect.effect)
    }

    /// The effects skipped for want of authority, with why.
    pub fn skipped(&self) -> impl Iterator<Item = &EffectJudged> {
        self.effects.iter().filter(|effect| self.matched && !effect.would_run)
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
            format!("posts the message's sender, recipients and subject to {url}")
        }
        ButlerEffect::Forward { mailbox } => format!("files a copy of the message in mailbox {mailbox}"),
        ButlerEffect::Label { label } => {
            format!("labels the conversation “{}”", normalise_label(label).unwrap_or_else(|| label.clone()))
        }
    }
}

/// Judges `rules` against `facts`, the effects with the sponsor's relations on
/// the mailbox now (`held_now`) and, for a published version, those pinned when
/// it was published: an effect runs only with what both allow. An effect that
/// reaches another mailbox also needs what the sponsor holds there now
/// (`elsewhere`); publishing required it, so that too was held when pinned.
pub fn judge(
    rules: &ButlerRules,
    facts: &DeliveryFacts,
    held_now: &[Relation],
    pinned: Option<&[Relation]>,
    elsewhere: &HeldElsewhere,
) -> Judgement {
    let conditions: Vec<ConditionJudged> =
        rules.conditions.iter().map(|condition| judge_condition(condition, facts)).collect();
    let matched = conditions.iter().all(|condition| condition.matched);
    let effects = rules
        .effects
        .iter()
        .map(|effect| {
            let missing_now = effect.requires().iter().find(|relation| !held_now.contains(relation));
            let missing_pinned = pinned.and_then(|pinned| effect.requires().iter().find(|r| !pinned.contains(r)));
            let missing_there = effect.requires_elsewhere().and_then(|(mailbox, required)| {
                let held = elsewhere.get(mailbox).map(Vec::as_slice).unwrap_or_default();
                required.iter().find(|relation| !held.contains(relation)).map(|relation| (mailbox, relation))
            });
            let (would_run, outcome) = match (matched, missing_pinned, missing_now) {
                (false, _, _) => (false, format!("would not run: a condition did not hold; it {}", describe(effect))),
                (true, Some(relation), _) => (
                    false,
                    format!(
                        "skipped: its sponsor did not hold {} on the mailbox when this version was published",
                        relation.name()
                    ),
                ),
                (true, None, Some(relation)) => {
                    (false, format!("skipped: its sponsor no longer holds {} on the mailbox", relation.name()))
                }
                (true, None, None) => match missing_there {
                    Some((mailbox, relation)) => (
                        false,
                        format!(
                            "skipped: its sponsor does not hold {} on mailbox {mailbox}, or it is no longer a mailbox of this node",
                            relation.name()
                        ),
                    ),
                    None => (true, describe(effect)),
                },
            };
            EffectJudged { effect: effect.clone(), would_run, outcome }
        })
        .collect();
    Judgement { matched, conditions, effects }
}

#[cfg(test)]
mod tests {
    use mailroom_contract::api::ThreadStatus;

    use super::*;

    fn facts() -> DeliveryFacts {
        DeliveryFacts {
            from: "Ana <ana@customer.example>".into(),
            recipients: vec!["Support <support@mailroom.test>".into()],
            subject: "Invoice 4471 overdue".into(),
            sender_authentication: Some(SenderAuthentication::Authenticated),
            attachments: 1,
        }
    }

    const WORKS: &[Relation] = &[Relation::MailboxMetadataRead, Relation::SendPropose];

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
        let judged = judge(&rules, &facts(), WORKS, Some(WORKS), &HeldElsewhere::new());
        assert!(judged.matched);
        assert_eq!(judged.running().count(), 1);
        let mut other = facts();
        other.sender_authentication = None;
        let rules = ButlerRules {
            conditions: vec![ButlerCondition::SenderAuthentication { is: SenderAuthentication::Authenticated }],
            ..rules
        };
        let judged = judge(&rules, &other, WORKS, Some(WORKS), &HeldElsewhere::new());
        assert!(!judged.matched);
        assert_eq!(judged.conditions[0].found, "unverified");
        assert_eq!(judged.running().count(), 0);
        assert_eq!(judged.skipped().count(), 0, "not matching is not skipping");
    }

    #[test]
    fn an_effect_runs_only_with_what_was_pinned_and_is_still_held() {
        let rules =
            ButlerRules { conditions: vec![], effects: vec![ButlerEffect::Assign { assignee: "usr_01".into() }] };
        let lost = judge(&rules, &facts(), &[Relation::MailboxMetadataRead], Some(WORKS), &HeldElsewhere::new());
        assert!(lost.effects[0].outcome.contains("no longer holds send.propose"), "{:?}", lost.effects);
        // Granted since publishing: a published version never widens.
        let widened = judge(&rules, &facts(), WORKS, Some(&[Relation::MailboxMetadataRead]), &HeldElsewhere::new());
        assert!(widened.effects[0].outcome.contains("when this version was published"), "{:?}", widened.effects);
        assert_eq!(widened.skipped().count(), 1);
        assert_eq!(
            judge(&rules, &facts(), WORKS, None, &HeldElsewhere::new()).running().count(),
            1,
            "a draft is judged by what is held now"
        );
    }

    #[test]
    fn a_copy_needs_the_sponsor_to_read_the_other_mailbox_as_well() {
        let rules =
            ButlerRules { conditions: vec![], effects: vec![ButlerEffect::Forward { mailbox: "mbx_02".into() }] };
        let reads: &[Relation] = &[Relation::MailboxMetadataRead, Relation::MailboxContentRead];
        let unread = judge(&rules, &facts(), reads, Some(reads), &HeldElsewhere::new());
        assert!(unread.effects[0].outcome.contains("mailbox.content.read on mailbox mbx_02"), "{:?}", unread.effects);
        let there = HeldElsewhere::from([("mbx_02".to_string(), vec![Relation::MailboxContentRead])]);
        assert_eq!(judge(&rules, &facts(), reads, Some(reads), &there).running().count(), 1);
        // Reading the other mailbox never stands in for reading this one.
        let blind = judge(&rules, &facts(), WORKS, Some(WORKS), &there);
        assert!(blind.effects[0].outcome.contains("mailbox.content.read on the mailbox when"), "{:?}", blind.effects);
    }
}
