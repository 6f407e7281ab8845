//! The administrator's routes for butlers: listing, creating, reading and
//! editing them (each edit of the rules a new draft version), publishing a
//! version (pinning what its sponsor holds then), and the dry run, which walks
//! a version over a past delivery and writes nothing.

use mailroom_contract::api::normalise_label;
use mailroom_contract::api::{
    Butler, ButlerEffect, ButlerList, ButlerRules, ButlerSimulation, ButlerVersion, CreateButler, EmailAddress,
    PublishButler, SimulateButler, UpdateButler, butler_limits,
};
use mailroom_contract::{PathParameter, Relation};

use super::delivery;
use super::errors::ButlerError;
use super::rules::{HeldElsewhere, SponsorAuthority, held_elsewhere_of, judge, relations};
use super::store::{self, ButlerRow, NewButler, NewVersion, VersionRow};
use super::surroundings::{self, Conversation};
use crate::core::context::{Context, MAILBOXES_PER_READ};
use crate::core::crypto::sha256_hex;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of, new_id};
use crate::core::outbound::{Destination, OutboundPolicy};
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::{QueryResult, Statement};
use crate::core::text;
use crate::core::time::rfc3339;
use crate::core::webhooks;
use crate::mail::location::{self, MailStore};

/// A name's checks.
fn valid_name(name: &str) -> Result<String, Refusal> {
    text::refuse_direction_controls("name", name)?;
    let name = name.trim();
    if name.is_empty() || name.chars().count() > butler_limits::NAME_CHARACTERS {
        return Err(RequestError::wrong_field("name", format!("1 to {} characters", butler_limits::NAME_CHARACTERS)));
    }
    Ok(name.to_string())
}

/// A version's checks: within the limits, every text to match not empty, every
/// assignee an id, every copy filed in another mailbox than `mailbox_id`, every
/// webhook where `policy` lets the node post.
fn valid_rules(rules: &ButlerRules, mailbox_id: &str, policy: &OutboundPolicy) -> Result<(), Refusal> {
    use mailroom_contract::api::{ButlerCondition as C, ButlerEffect as E};
    if rules.conditions.len() > butler_limits::CONDITIONS {
        return Err(RequestError::wrong_field(
            "rules.conditions",
            format!("at most {} conditions", butler_limits::CONDITIONS),
        ));
    }
    if rules.effects.is_empty() || rules.effects.len() > butler_limits::EFFECTS {
        return Err(RequestError::wrong_field("rules.effects", format!("1 to {} effects", butler_limits::EFFECTS)));
    }
    for (index, condition) in rules.conditions.iter().enumerate() {
        if let C::From { contains } | C::Recipients { contains } | C::Subject { contains } = condition {
            let length = contains.trim().chars().count();
            if length == 0 || contains.chars().count() > butler_limits::MATCH_CHARACTERS {
                return Err(RequestError::wrong_field(
                    &format!("rules.conditions[{index}].contains"),
                    format!("1 to {} characters of text to look for", butler_limits::MATCH_CHARACTERS),
                ));
            }
        }
    }
    for (index, effect) in rules.effects.iter().enumerate() {
        if let E::DraftReply { text } = effect
            && (text.trim().is_empty() || text.chars().count() > butler_limits::REPLY_CHARACTERS)
        {
            return Err(RequestError::wrong_field(
                &format!("rules.effects[{index}].text"),
                format!("1 to {} characters of the reply's text", butler_limits::REPLY_CHARACTERS),
            ));
        }
        // Checked here and again before every post (`delivery::post_webhooks`).
        if let E::NotifyWebhook { url } = effect
            && let Err(refused) = Destination::check(url, butler_limits::WEBHOOK_URL_BYTES, policy)
        {
            return Err(RequestError::wrong_field(
                &format!("rules.effects[{index}].url"),
                format!(
                    "{}; a butler's webhook is an https address on the internet of at most {} bytes, without credentials in it, never one inside a network",
                    refused.why(),
                    butler_limits::WEBHOOK_URL_BYTES
                ),
            ));
        }
        if let E::Forward { mailbox } = effect
            && (!is_id_of(mailbox, IdKind::Mailbox) || mailbox == mailbox_id)
        {
            return Err(RequestError::wrong_field(
                &format!("rules.effects[{index}].mailbox"),
                "another mailbox of this node (`mbx_…`) than the butler's own",
            ));
        }
        if let E::Label { label } = effect {
            text::refuse_direction_controls(&format!("rules.effects[{index}].label"), label)?;
        }
        if let E::Label { label } = effect
            && normalise_label(label).is_none()
        {
            return Err(RequestError::wrong_field(
                &format!("rules.effects[{index}].label"),
                crate::mail::threads::labels::label_words(),
            ));
        }
        if let E::Assign { assignee } = effect
            && !(is_id_of(assignee, IdKind::Person) || is_id_of(assignee, IdKind::Agent))
        {
            return Err(RequestError::wrong_field(
                &format!("rules.effects[{index}].assignee"),
                "a person's or agent's id (`usr_…`, `agt_…`) who works the mailbox",
            ));
        }
    }
    Ok(())
}

impl ButlerRow {
    fn versions(&self) -> Vec<VersionRow> {
        serde_json::from_str(&self.versions_json).unwrap_or_default()
    }

    fn held_now(&self) -> Vec<Relation> {
        relations(self.held_now.as_deref().unwrap_or_default().split(','))
    }

    fn held_elsewhere(&self) -> HeldElsewhere {
        held_elsewhere_of(self.held_elsewhere.as_deref())
    }

    /// The butler as the API shows it; `key` is the node's own secret its
    /// webhook secret is derived from.
    fn present(&self, key: &[u8]) -> Butler {
        let versions = self.versions();
        let notifies = versions.iter().any(|version| {
            version.rules.effects.iter().any(|effect| matches!(effect, ButlerEffect::NotifyWebhook { .. }))
        });
        Butler {
            webhook_secret: notifies.then(|| webhooks::derived_secret(key, &self.id)),
            id: self.id.clone(),
            mailbox_id: self.mailbox_id.clone(),
            name: self.name.clone(),
            sponsor: self.sponsor_id.clone(),
            sponsor_name: self.sponsor_name.clone(),
            published_version: self.published_version,
            active: self.active != 0 && self.published_version.is_some(),
            versions: versions
                .into_iter()
                .map(|version| ButlerVersion {
                    version: version.version,
                    rules: version.rules,
                    created_at: rfc3339(version.created_at),
                    created_by: version.created_by,
                    published_at: version.published_at.map(rfc3339),
                    pinned_relations: version.pinned_relations,
                })
                .collect(),
        }
    }
}

/// Reads the path's mailbox and butler (with `extra` in the same round trip):
/// 404 when either is missing.
async fn the_butler(
    context: &mut Context<'_>,
    extra: Vec<Statement>,
) -> Result<(ButlerRow, Vec<QueryResult>), Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let butler_id = context.path(PathParameter::ButlerId)?.to_string();
    let mut statements = vec![store::butler(&butler_id, &mailbox_id)];
    statements.extend(extra);
    let mut results = context.read(statements).await?;
    let found = results.remove(0);
    match found.first() {
        Some(row) => Ok((row.decode().map_err(|error| context.internal(error))?, results)),
        None => Err(ButlerError::NoSuchButler { id: butler_id }.into()),
    }
}

/// The statement inserting version `version` of `butler_id`.
fn insert_version(
    context: &Context<'_>,
    butler_id: &str,
    version: i64,
    rules: &ButlerRules,
) -> Result<Statement, Refusal> {
    let rules_json = serde_json::to_string(rules).map_err(|error| context.internal(error))?;
    let version = NewVersion {
        butler_id,
        version,
        rules_json,
        created_at: context.now_ms(),
        created_by: context.caller().actor_id().unwrap_or_default(),
    };
    Ok(store::version_written(version).statement())
}

/// `GET /api/mailboxes/:mailboxId/butlers`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let [mailbox, butlers] = context.read_array([store::mailbox(&mailbox_id), store::butlers_of(&mailbox_id)]).await?;
    if mailbox.rows.is_empty() {
        return Err(ButlerError::NoSuchMailbox { id: mailbox_id }.into());
    }
    let rows: Vec<ButlerRow> = butlers.decode_all().map_err(|error| context.internal(error))?;
    Ok(context
        .json(&ButlerList { butlers: rows.iter().map(|row| row.present(&context.config().session_key)).collect() }))
}

/// `POST /api/mailboxes/:mailboxId/butlers`.
pub async fn create(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: CreateButler = context.body()?;
    let name = valid_name(&request.name)?;
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    valid_rules(&request.rules, &mailbox_id, &context.config().outbound_policy())?;
    if !is_id_of(&request.sponsor, IdKind::Person) {
        return Err(ButlerError::NotASponsor { id: request.sponsor }.into());
    }
    let [mailbox, sponsor] =
        context.read_array([store::mailbox(&mailbox_id), store::enabled_person(&request.sponsor)]).await?;
    if mailbox.rows.is_empty() {
        return Err(ButlerError::NoSuchMailbox { id: mailbox_id }.into());
    }
    let Some(sponsor_name) = sponsor.first().and_then(|row| row.text("name").ok()) else {
        return Err(ButlerError::NotASponsor { id: request.sponsor }.into());
    };
    let id = new_id(IdKind::Butler, context.platform());
    let creator = context.caller().actor_id().unwrap_or_default().to_string();
    let butler = NewButler {
        id: &id,
        mailbox_id: &mailbox_id,
        name: &name,
        sponsor_id: &request.sponsor,
        created_by: &creator,
        created_at: context.now_ms(),
    };
    context.write(store::butler_created(butler).statement());
    let version = insert_version(context, &id, 1, &request.rules)?;
    context.write(version);
    context.audit_object(id.clone());
    context.audit_detail(serde_json::json!({ "mailbox": mailbox_id, "sponsor": request.sponsor, "version": 1 }));
    let notifies = request.rules.effects.iter().any(|effect| matches!(effect, ButlerEffect::NotifyWebhook { .. }));
    let butler = Butler {
        webhook_secret: notifies.then(|| webhooks::derived_secret(&context.config().session_key, &id)),
        id,
        mailbox_id,
        name,
        sponsor: request.sponsor,
        sponsor_name: Some(sponsor_name),
        published_version: None,
        active: false,
        versions: vec![ButlerVersion {
            version: 1,
            rules: request.rules,
            created_at: rfc3339(context.now_ms()),
            created_by: creator,
            published_at: None,
            pinned_relations: None,
        }],
    };
    Ok(context.json(&butler))
}

/// `GET /api/mailboxes/:mailboxId/butlers/:butlerId`.
pub async fn get(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (row, _) = the_butler(context, Vec::new()).await?;
    Ok(context.json(&row.present(&context.config().session_key)))
}

/// `PATCH /api/mailboxes/:mailboxId/butlers/:butlerId`.
pub async fn update(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: UpdateButler = context.body()?;
    let name = request.name.as_deref().map(valid_name).transpose()?;
    if let Some(rules) = &request.rules {
        valid_rules(rules, context.path(PathParameter::MailboxId)?, &context.config().outbound_policy())?;
    }
    if name.is_none() && request.rules.is_none() && request.active.is_none() {
        return Err(RequestError::wrong_field("", "at least one of `name`, `rules` or `active`"));
    }
    let (mut row, _) = the_butler(context, Vec::new()).await?;
    if let Some(name) = name {
        context.write(store::renamed(&row.id, &name));
        row.name = name;
    }
    if let Some(active) = request.active {
        context.write(store::switched(&row.id, active));
        row.active = i64::from(active);
    }
    let mut versions = row.versions();
    if let Some(rules) = request.rules {
        let next = versions.first().map_or(1, |latest| latest.version + 1);
        // Two edits at once both choose the same number; the second is refused
        // rather than overwriting the first.
        let version = insert_version(context, &row.id, next, &rules)?;
        context.write(version);
        context.on_constraint_violation("butler_versions.butler_id", ButlerError::AlreadyPublished { version: next });
        versions.insert(
            0,
            VersionRow {
                version: next,
                rules,
                created_at: context.now_ms(),
                created_by: context.caller().actor_id().unwrap_or_default().to_string(),
                published_at: None,
                pinned_relations: None,
            },
        );
        row.versions_json = versions_json(&versions);
        context.audit_detail(serde_json::json!({ "version": next }));
    }
    context.audit_object(row.id.clone());
    Ok(context.json(&row.present(&context.config().session_key)))
}

fn versions_json(versions: &[VersionRow]) -> String {
    let values: Vec<serde_json::Value> = versions
        .iter()
        .map(|version| {
            serde_json::json!({
                "version": version.version, "rules": version.rules, "created_at": version.created_at,
                "created_by": version.created_by, "published_at": version.published_at,
                "pinned_relations": version.pinned_relations,
            })
        })
        .collect();
    serde_json::Value::from(values).to_string()
}

/// `POST /api/mailboxes/:mailboxId/butlers/:butlerId/publish`.
pub async fn publish(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: PublishButler = context.body()?;
    let (mut row, _) = the_butler(context, Vec::new()).await?;
    let mut versions = row.versions();
    let Some(chosen) = versions.iter_mut().find(|version| version.version == request.version) else {
        return Err(ButlerError::NoSuchVersion { version: request.version }.into());
    };
    if chosen.published_at.is_some() {
        return Err(ButlerError::AlreadyPublished { version: request.version }.into());
    }
    let held = row.held_now();
    if let Some(relation) =
        chosen.rules.effects.iter().flat_map(|effect| effect.requires()).find(|relation| !held.contains(relation))
    {
        return Err(ButlerError::SponsorLacks { relation: *relation }.into());
    }
    let elsewhere = row.held_elsewhere();
    for (mailbox, required) in chosen.rules.effects.iter().filter_map(ButlerEffect::requires_elsewhere) {
        let held = elsewhere.get(mailbox).map(Vec::as_slice).unwrap_or_default();
        if let Some(relation) = required.iter().find(|relation| !held.contains(relation)) {
            return Err(ButlerError::SponsorLacksThere { relation: *relation, mailbox: mailbox.to_string() }.into());
        }
    }
    let pinned: Vec<String> = held.iter().map(|relation| relation.name().to_string()).collect();
    let pinned_json = serde_json::to_string(&pinned).map_err(|error| context.internal(error))?;
    let publisher = (context.caller().actor_id().unwrap_or_default(), context.now_ms());
    context.write_changing_one_row(
        store::version_published(&row.id, request.version, publisher, pinned_json),
        ButlerError::AlreadyPublished { version: request.version },
    );
    context.write(store::acting_by(&row.id, request.version));
    context.audit_object(row.id.clone());
    // The chain keeps what was published: the rules' SHA-256 (of the JSON
    // stored in `rules_json`), so a version changed behind the schema's
    // triggers no longer matches its entry.
    let rules_json = serde_json::to_string(&chosen.rules).map_err(|error| context.internal(error))?;
    context.audit_detail(serde_json::json!({
        "version": request.version,
        "pinned": pinned,
        "sponsor": row.sponsor_id,
        "rules_sha256": sha256_hex(rules_json.as_bytes()),
    }));
    chosen.published_at = Some(context.now_ms());
    chosen.pinned_relations = Some(pinned);
    row.versions_json = versions_json(&versions);
    row.published_version = Some(request.version);
    row.active = 1;
    Ok(context.json(&row.present(&context.config().session_key)))
}

/// `POST /api/mailboxes/:mailboxId/butlers/:butlerId/simulate`: reads, judges,
/// answers; queues no write, so nothing is committed and nothing audited. What
/// is around the delivery (its conversation, the assignees, the mailboxes a
/// copy would go to, the node's own addresses) is read as it is now, in the
/// same round trip, so the dry run skips what a delivery now would skip.
pub async fn simulate(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: SimulateButler = context.body()?;
    if !is_id_of(&request.receipt_id, IdKind::Receipt) {
        return Err(RequestError::wrong_field("receipt_id", "a received message's id (`rcp_…`) from this mailbox"));
    }
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let butler_id = context.path(PathParameter::ButlerId)?.to_string();
    // The message is read where the mailbox's mail is, the butler and what
    // is around the message (over every version of the butler: the one
    // walked is chosen from them) from D1 beside it (decision 0040).
    let receipt = store::receipt_judged(&request.receipt_id, &mailbox_id);
    let butler = store::butler(&butler_id, &mailbox_id);
    let around = store::around_receipt(&butler_id, &request.receipt_id, context.now_ms());
    let read = location::read(context, &mailbox_id, vec![butler, around], vec![receipt]).await?;
    let row: ButlerRow = match read.directory.first().and_then(QueryResult::first) {
        Some(row) => row.decode().map_err(|error| context.internal(error))?,
        None => return Err(ButlerError::NoSuchButler { id: butler_id }.into()),
    };
    let Some(received) = read.mail.first().and_then(QueryResult::first) else {
        return Err(ButlerError::NoSuchReceipt { id: request.receipt_id }.into());
    };
    let versions = row.versions();
    let chosen = match request.version {
        None => versions.first(),
        Some(wanted) => versions.iter().find(|version| version.version == wanted),
    };
    let Some(chosen) = chosen else {
        return Err(ButlerError::NoSuchVersion { version: request.version.unwrap_or(1) }.into());
    };
    // Whether a copy's target already holds the message is asked of the
    // target's own database too, beside the second read: D1 answers only for
    // targets whose mail it keeps.
    let message_id = received.text("judged_message_id").map_err(|error| context.internal(error))?;
    let targets: Vec<String> = chosen
        .rules
        .effects
        .iter()
        .filter_map(|effect| match effect {
            ButlerEffect::Forward { mailbox } => Some(mailbox.clone()),
            _ => None,
        })
        .take(MAILBOXES_PER_READ)
        .collect();
    let in_targets = targets.iter().map(|target| (target.clone(), vec![store::holds_message(&message_id)])).collect();
    let (around, in_targets) = match read.store {
        MailStore::D1 => {
            let (_, in_targets) = context.read_beside_mailboxes(Vec::new(), in_targets).await?;
            (read.directory.get(1).cloned().unwrap_or_default(), in_targets)
        }
        // D1 holds no receipt of a mailbox whose mail moved: what is around
        // the message is asked of it given what the receipt says.
        MailStore::OwnDatabase => {
            let facts = delivery::facts_of_row(received);
            let candidates: Vec<&EmailAddress> = facts.reply_to.iter().chain(facts.sender.as_ref()).collect();
            let candidates = serde_json::to_string(&candidates).map_err(|error| context.internal(error))?;
            let asked = store::around_message(&butler_id, &message_id, candidates, context.now_ms());
            let (mut around, in_targets) = context.read_beside_mailboxes(vec![asked], in_targets).await?;
            (around.pop().unwrap_or_default(), in_targets)
        }
    };
    let facts = delivery::facts_of_row(received);
    let conversation = Conversation::of(Some(received));
    let mut around = surroundings::surroundings(&conversation, &around.rows);
    for (target, answer) in targets.into_iter().zip(in_targets) {
        let results = answer.map_err(|error| context.internal(error))?;
        let held = results.first().and_then(|result| result.first_flag("held")).unwrap_or(false);
        if held {
            around.holding_the_message.insert(target);
        }
    }
    let pinned = chosen.pinned_relations.as_ref().map(|names| relations(names.iter().map(String::as_str)));
    let (held_now, elsewhere) = (row.held_now(), row.held_elsewhere());
    let authority = SponsorAuthority { held_now: &held_now, pinned: pinned.as_deref(), elsewhere: &elsewhere };
    let judged = judge(&chosen.rules, &facts, &authority, &mut around);
    Ok(context.json(&ButlerSimulation {
        butler_id: row.id.clone(),
        version: chosen.version,
        receipt_id: request.receipt_id,
        matched: judged.matched,
        effects: judged.effects(),
        conditions: judged.conditions,
    }))
}
