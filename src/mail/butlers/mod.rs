//! Butlers: an administrator's rules over a mailbox's inbound mail (decision
//! 0023). A butler has a sponsor, a person whose authority its effects run
//! under, and versions: editing writes a draft version; publishing one pins the
//! relations the sponsor holds on the mailbox then. A delivery is judged by the
//! published version (`rules`), and each effect runs only with what the pinned
//! relations and the sponsor's live ones both allow (`delivery`); the dry run
//! walks any version over a past delivery and writes nothing.

mod delivery;
mod rules;
mod surroundings;

use mailroom_contract::api::normalise_label;
use mailroom_contract::api::{
    Butler, ButlerEffect, ButlerList, ButlerRules, ButlerSimulation, ButlerVersion, CreateButler, PublishButler,
    SimulateButler, UpdateButler, butler_limits,
};
use mailroom_contract::{PathParameter, Relation};
use serde::Deserialize;

pub use delivery::{
    ButlerWork, COPIED_COLUMNS, Delivered, ReplyBasis, StoredIn, WebhookPost, active_on_delivery, on_delivery,
    post_webhooks,
};
pub use rules::DeliveryFacts;
use rules::{HeldElsewhere, SponsorAuthority, judge};
pub use surroundings::{Conversation, with_conversation};

use crate::authz::tuples;
use crate::core::context::Context;
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

/// Why a butler call was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ButlerError {
    NoSuchMailbox {
        id: String,
    },
    NoSuchButler {
        id: String,
    },
    NoSuchVersion {
        version: i64,
    },
    NoSuchReceipt {
        id: String,
    },
    /// The sponsor named is not an enabled person.
    NotASponsor {
        id: String,
    },
    AlreadyPublished {
        version: i64,
    },
    /// The sponsor does not hold what the version's effects need.
    SponsorLacks {
        relation: Relation,
    },
    /// The sponsor does not hold what an effect needs on the other mailbox it
    /// reaches, or there is no such mailbox.
    SponsorLacksThere {
        relation: Relation,
        mailbox: String,
    },
}

impl From<ButlerError> for Refusal {
    fn from(error: ButlerError) -> Refusal {
        match error {
            ButlerError::NoSuchMailbox { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no mailbox {id}."),
                "No mailbox has this id.",
                "List mailboxes with GET /api/mailboxes/all and use an id from there.",
            ),
            ButlerError::NoSuchButler { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no butler {id} on this mailbox."),
                "No butler of this mailbox has this id.",
                "List the mailbox's butlers with list_butlers and use an id from there.",
            ),
            ButlerError::NoSuchVersion { version } => Refusal::new(
                404,
                "not_found",
                format!("The butler has no version {version}."),
                "Versions are numbered from 1, one per edit of its rules.",
                "Read the butler with get_butler and name one of its versions.",
            ),
            ButlerError::NoSuchReceipt { id } => Refusal::new(
                404,
                "not_found",
                format!("This mailbox received no message {id}."),
                "A dry run walks a message the butler's own mailbox received.",
                "List the mailbox's messages and name one of them (`rcp_…`).",
            ),
            ButlerError::NotASponsor { id } => Refusal::new(
                400,
                "invalid_body",
                format!("{id} cannot sponsor a butler."),
                "A butler's sponsor is a person of this node, enabled; an agent acts under a person and cannot lend authority itself.",
                "Name an enabled person's id (`usr_…`) in `sponsor`.",
            ),
            ButlerError::AlreadyPublished { version } => Refusal::new(
                409,
                "conflict",
                format!("Version {version} is already published."),
                "A published version stays as published; another edit makes a new draft version.",
                "Change the rules with update_butler, then publish the new version.",
            ),
            ButlerError::SponsorLacks { relation } => Refusal::new(
                409,
                "sponsor_lacks",
                format!("Its sponsor does not hold {} on the mailbox.", relation.name()),
                "A published version pins what its sponsor holds, and an effect runs only with that: this one's would all be skipped.",
                format!(
                    "Ask an administrator to grant the sponsor {} on the mailbox, or choose another sponsor.",
                    relation.name()
                ),
            ),
            ButlerError::SponsorLacksThere { relation, mailbox } => Refusal::new(
                409,
                "sponsor_lacks",
                format!("Its sponsor does not hold {} on mailbox {mailbox}.", relation.name()),
                "A butler files a copy only where its sponsor could read it, and there is no such mailbox or the sponsor cannot.",
                format!(
                    "Ask an administrator to grant the sponsor {} on {mailbox}, or file the copy in a mailbox the sponsor reads.",
                    relation.name()
                ),
            ),
        }
    }
}

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

/// The columns a butler is read with: itself, its sponsor's name, every version
/// newest first, and what its sponsor holds on its mailbox now.
fn butler_columns() -> String {
    format!(
        "b.id, b.mailbox_id, b.name, b.sponsor_id, b.published_version, b.active, \
         (SELECT p.name FROM people p WHERE p.id = b.sponsor_id) AS sponsor_name, \
         (SELECT json_group_array(json_object('version', v.version, 'rules', json(v.rules_json), \
            'created_at', v.created_at, 'created_by', v.created_by, 'published_at', v.published_at, \
            'pinned_relations', json(v.pinned_relations_json))) \
          FROM (SELECT * FROM butler_versions v WHERE v.butler_id = b.id ORDER BY v.version DESC) AS v) AS versions_json, \
         {} AS held_now, {} AS held_elsewhere",
        tuples::relations_of_person_in("b.sponsor_id", "b.mailbox_id"),
        held_elsewhere("butler_versions w, json_each(w.rules_json, '$.effects') e", "w.butler_id = b.id")
    )
}

/// SQL for what the sponsor (`b.sponsor_id`) holds now on each other mailbox
/// the effects in `effects` (FROM items ending in `json_each(…) e`, filtered by
/// `filter`) reach, as a JSON object of comma-separated relations by mailbox
/// id; a mailbox the node does not have is left out.
pub(super) fn held_elsewhere(effects: &str, filter: &str) -> String {
    format!(
        "(SELECT json_group_object(f.target, COALESCE({}, '')) FROM \
           (SELECT DISTINCT json_extract(e.value, '$.mailbox') AS target FROM {effects} \
            WHERE {filter} AND json_extract(e.value, '$.do') = 'forward') f \
         WHERE f.target IN (SELECT id FROM mailboxes))",
        tuples::relations_of_person_in("b.sponsor_id", "f.target")
    )
}

/// `held_elsewhere`'s answer, read.
pub(super) fn held_elsewhere_of(json: Option<&str>) -> HeldElsewhere {
    let by_mailbox: std::collections::BTreeMap<String, String> =
        json.and_then(|json| serde_json::from_str(json).ok()).unwrap_or_default();
    by_mailbox.into_iter().map(|(mailbox, names)| (mailbox, relations(names.split(',')))).collect()
}

#[derive(Clone, Debug, Deserialize)]
struct VersionRow {
    version: i64,
    rules: ButlerRules,
    created_at: i64,
    created_by: String,
    published_at: Option<i64>,
    pinned_relations: Option<Vec<String>>,
}

#[derive(Clone, Debug, Deserialize)]
struct ButlerRow {
    id: String,
    mailbox_id: String,
    name: String,
    sponsor_id: String,
    sponsor_name: Option<String>,
    published_version: Option<i64>,
    active: i64,
    versions_json: String,
    held_now: Option<String>,
    held_elsewhere: Option<String>,
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

/// The relations named in `names`, skipping any the node does not know.
fn relations<'name>(names: impl IntoIterator<Item = &'name str>) -> Vec<Relation> {
    names.into_iter().filter_map(Relation::parse).collect()
}

/// Reads the path's mailbox and butler (with `extra` in the same round trip):
/// 404 when either is missing.
async fn the_butler(
    context: &mut Context<'_>,
    extra: Vec<Statement>,
) -> Result<(ButlerRow, Vec<QueryResult>), Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let butler_id = context.path(PathParameter::ButlerId)?.to_string();
    let mut statements = vec![
        Statement::new(format!("SELECT {} FROM butlers b WHERE b.id = ?1 AND b.mailbox_id = ?2", butler_columns()))
            .bind(butler_id.as_str())
            .bind(mailbox_id.as_str()),
    ];
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
    Ok(Statement::new(
        "INSERT INTO butler_versions (butler_id, version, rules_json, created_at, created_by) VALUES (?1, ?2, ?3, ?4, ?5)",
    )
    .bind(butler_id)
    .bind(version)
    .bind(rules_json)
    .bind(context.now_ms())
    .bind(context.caller().actor_id().unwrap_or_default()))
}

/// `GET /api/mailboxes/:mailboxId/butlers`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let [mailbox, butlers] = context
        .read_array([
            Statement::new("SELECT id FROM mailboxes WHERE id = ?1").bind(mailbox_id.as_str()),
            Statement::new(format!(
                "SELECT {} FROM butlers b WHERE b.mailbox_id = ?1 ORDER BY b.name, b.id",
                butler_columns()
            ))
            .bind(mailbox_id.as_str()),
        ])
        .await?;
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
    let [mailbox, sponsor] = context
        .read_array([
            Statement::new("SELECT id FROM mailboxes WHERE id = ?1").bind(mailbox_id.as_str()),
            Statement::new("SELECT name FROM people WHERE id = ?1 AND disabled_at IS NULL")
                .bind(request.sponsor.as_str()),
        ])
        .await?;
    if mailbox.rows.is_empty() {
        return Err(ButlerError::NoSuchMailbox { id: mailbox_id }.into());
    }
    let Some(sponsor_name) = sponsor.first().and_then(|row| row.text("name").ok()) else {
        return Err(ButlerError::NotASponsor { id: request.sponsor }.into());
    };
    let id = new_id(IdKind::Butler, context.platform());
    let creator = context.caller().actor_id().unwrap_or_default().to_string();
    context.write(
        Statement::new(
            "INSERT INTO butlers (id, mailbox_id, name, sponsor_id, created_by, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .bind(id.as_str())
        .bind(mailbox_id.as_str())
        .bind(name.as_str())
        .bind(request.sponsor.as_str())
        .bind(creator.as_str())
        .bind(context.now_ms()),
    );
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
        context.write(
            Statement::new("UPDATE butlers SET name = ?1 WHERE id = ?2").bind(name.as_str()).bind(row.id.as_str()),
        );
        row.name = name;
    }
    if let Some(active) = request.active {
        context.write(
            Statement::new("UPDATE butlers SET active = ?1 WHERE id = ?2")
                .bind(i64::from(active))
                .bind(row.id.as_str()),
        );
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
    context.write_changing_one_row(
        Statement::new(
            "UPDATE butler_versions SET published_at = ?3, published_by = ?4, pinned_relations_json = ?5 \
             WHERE butler_id = ?1 AND version = ?2 AND published_at IS NULL",
        )
        .bind(row.id.as_str())
        .bind(request.version)
        .bind(context.now_ms())
        .bind(context.caller().actor_id().unwrap_or_default())
        .bind(pinned_json),
        ButlerError::AlreadyPublished { version: request.version },
    );
    context.write(
        Statement::new("UPDATE butlers SET published_version = ?1, active = 1 WHERE id = ?2")
            .bind(request.version)
            .bind(row.id.as_str()),
    );
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
    let receipt = Statement::new(format!(
        "SELECT {}, {} FROM receipts r LEFT JOIN mail_threads t ON t.id = r.thread_id \
         WHERE r.id = ?1 AND r.mailbox_id = ?2",
        delivery::FACT_COLUMNS,
        surroundings::CONVERSATION_COLUMNS
    ))
    .bind(request.receipt_id.as_str())
    .bind(mailbox_id.as_str());
    // Over every version of the butler: the one walked is chosen from them.
    let effects = "butler_versions w, json_each(w.rules_json, '$.effects') e";
    let (working, mut parameters) =
        surroundings::assignees_working(effects, "w.butler_id = b.id", "b.mailbox_id", context.now_ms());
    parameters.extend([
        request.receipt_id.as_str().into(),
        request.receipt_id.as_str().into(),
        butler_id.as_str().into(),
    ]);
    let around = Statement {
        sql: format!(
            "SELECT {working} AS working, {} AS holding, {} AS own_addresses \
             FROM butlers b, receipts r WHERE r.id = ? AND b.id = ?",
            surroundings::targets_holding(effects, "w.butler_id = b.id", "r.message_id"),
            surroundings::own_addresses(
                "(SELECT json_insert(o.reply_to_json, '$[#]', json_object('address', o.from_address)) FROM receipts o WHERE o.id = ?)"
            ),
        )
        .into(),
        parameters,
    };
    let (row, results) = the_butler(context, vec![receipt, around]).await?;
    let Some(received) = results.first().and_then(QueryResult::first) else {
        return Err(ButlerError::NoSuchReceipt { id: request.receipt_id }.into());
    };
    let facts = delivery::facts_of_row(received);
    let conversation = Conversation::of(Some(received));
    let mut around = surroundings::surroundings(
        &conversation,
        results.get(1).map(|result| result.rows.as_slice()).unwrap_or_default(),
    );
    let versions = row.versions();
    let chosen = match request.version {
        None => versions.first(),
        Some(wanted) => versions.iter().find(|version| version.version == wanted),
    };
    let Some(chosen) = chosen else {
        return Err(ButlerError::NoSuchVersion { version: request.version.unwrap_or(1) }.into());
    };
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
