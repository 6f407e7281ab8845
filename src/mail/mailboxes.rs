//! Mailboxes: the addresses mail arrives at, created and renamed by an
//! administrator, and the two listings a caller finds its work through: where it
//! may send from (the work queue) and where it may read.
//!
//! Who may see a mailbox is never decided here: every listing asks
//! `authz::tuples`, which intersects an agent's tuples with its sponsor's. Each
//! listed mailbox carries the relations held on it and the tools those let their
//! holder call there, derived from the route declarations (and, for an agent,
//! its ceiling, read in the same batch), so no client restates which relation a
//! route needs.

use mailroom_contract::api::{CreateMailbox, Mailbox, MailboxList, UpdateMailbox};
use mailroom_contract::{PathParameter, Relation, registry};
use serde::Deserialize;

use crate::authz::{ceiling_of, ceiling_tools, holder_of, tuples};
use crate::core::addresses;
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of, new_id};
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement};
use crate::core::text;
use crate::core::time::rfc3339;
use crate::mail::store::mailboxes as store;

/// What can be wrong with a mailbox or a request about one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MailboxError {
    /// Not an address mail can be delivered to.
    InvalidAddress,
    /// Another mailbox has this address.
    AddressTaken,
    /// Empty or over-long display name.
    InvalidDisplayName,
    /// No mailbox has this id.
    NoSuchMailbox { id: String },
}

impl From<MailboxError> for Refusal {
    fn from(error: MailboxError) -> Refusal {
        match error {
            MailboxError::InvalidAddress => Refusal::new(
                400,
                "invalid_address",
                "That is not an address mail can be delivered to.",
                "A mailbox address is a local part, an @ and a domain with a dot, written plainly (RFC 5322: no spaces, quotes, comments or brackets).",
                "Send an address such as support@example.com.",
            ),
            MailboxError::AddressTaken => Refusal::new(
                409,
                "address_taken",
                "A mailbox with that address already exists.",
                "Each address is delivered to exactly one mailbox.",
                "Use the existing mailbox from GET /api/mailboxes/all, or choose another address.",
            ),
            MailboxError::InvalidDisplayName => Refusal::new(
                400,
                "invalid_display_name",
                "That display name cannot be used.",
                "A display name has 1 to 100 characters and no control characters.",
                "Send a name such as \"Support\".",
            ),
            MailboxError::NoSuchMailbox { id } => Refusal::not_found("mailbox", &id),
        }
    }
}

#[derive(Deserialize)]
struct MailboxRow {
    id: String,
    address: String,
    display_name: String,
    created_at: i64,
    #[serde(default)]
    held: Option<String>,
}

impl MailboxRow {
    /// The mailbox as answered, its `tools` derived from what is held on it and,
    /// for an agent, narrowed to the routes of its `ceiling`.
    fn present(self, ceiling: Option<&[String]>) -> Mailbox {
        let mut held: Vec<String> =
            self.held.unwrap_or_default().split(',').filter(|name| !name.is_empty()).map(str::to_string).collect();
        held.sort();
        held.dedup();
        let relations: Vec<Relation> = held.iter().filter_map(|name| Relation::parse(name)).collect();
        let tools = registry()
            .tools_on_mailbox(&relations)
            .into_iter()
            .filter(|tool| ceiling.is_none_or(|ceiling| ceiling.iter().any(|route| route == tool)))
            .map(str::to_string)
            .collect();
        Mailbox {
            id: self.id,
            address: self.address,
            display_name: self.display_name,
            created_at: rfc3339(self.created_at),
            held,
            tools,
        }
    }
}

/// Mailbox rows (`id`, `address`, `display_name`, `created_at`, and `held`: a
/// comma-separated list of relation names) as answered.
pub fn present_all(
    context: &Context<'_>,
    result: &QueryResult,
    ceiling: Option<&[String]>,
) -> Result<Vec<Mailbox>, Refusal> {
    let rows: Vec<MailboxRow> = result.decode_all().map_err(|error| context.internal(error))?;
    Ok(rows.into_iter().map(|row| row.present(ceiling)).collect())
}

/// Lists the mailboxes the route's declared filter lets the caller see (its
/// `Filtered` authority's relations, so the contract and the answer agree).
async fn list_declared(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let holder = holder_of(context.caller(), context.now_ms()).ok_or_else(Refusal::internal)?;
    let (all_of, any_of) = context.route().authority.rows_where().ok_or_else(Refusal::internal)?;
    let listing = tuples::mailboxes_where(&holder, all_of, any_of);
    let Caller::Agent { agent_id, .. } = context.caller() else {
        let [mailboxes] = context.read_array([listing]).await?;
        let mailboxes = present_all(context, &mailboxes, None)?;
        return Ok(context.json(&MailboxList { mailboxes }));
    };
    // An agent's tools are bounded by its ceiling too; read in the same batch.
    let [mailboxes, ceiling] = context.read_array([listing, ceiling_of(agent_id)]).await?;
    let ceiling = ceiling_tools(&ceiling);
    let mailboxes = present_all(context, &mailboxes, Some(&ceiling))?;
    Ok(context.json(&MailboxList { mailboxes }))
}

/// `GET /api/mailboxes`: where the caller may propose sends.
pub async fn list_work_queue(context: &mut Context<'_>) -> Result<Response, Refusal> {
    list_declared(context).await
}

/// `GET /api/mailboxes/readable`: where the caller may see mail.
pub async fn list_readable(context: &mut Context<'_>) -> Result<Response, Refusal> {
    list_declared(context).await
}

/// `GET /api/mailboxes/all`.
pub async fn list_all(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let holder = holder_of(context.caller(), context.now_ms()).ok_or_else(Refusal::internal)?;
    let all = store::every_mailbox();
    let [all, held] = context.read_array([all, tuples::mailboxes_where(&holder, &[], Relation::ALL)]).await?;
    let held = present_all(context, &held, None)?;
    let mut mailboxes = present_all(context, &all, None)?;
    for mailbox in &mut mailboxes {
        if let Some(mine) = held.iter().find(|mine| mine.id == mailbox.id) {
            mailbox.held = mine.held.clone();
            mailbox.tools = mine.tools.clone();
        }
    }
    Ok(context.json(&MailboxList { mailboxes }))
}

fn validate_display_name(name: &str) -> Result<String, MailboxError> {
    let name = name.trim();
    let valid = !name.is_empty() && name.chars().count() <= 100 && !name.chars().any(char::is_control);
    if valid { Ok(name.to_string()) } else { Err(MailboxError::InvalidDisplayName) }
}

/// `POST /api/mailboxes`.
pub async fn create(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: CreateMailbox = context.body()?;
    text::refuse_direction_controls("display_name", &request.display_name)?;
    let address = addresses::normalize(&request.address).ok_or(MailboxError::InvalidAddress)?;
    let display_name = validate_display_name(&request.display_name)?;
    let existing = store::mailbox_at(&address);
    let [existing] = context.read_array([existing]).await?;
    if !existing.rows.is_empty() {
        return Err(MailboxError::AddressTaken.into());
    }
    let mailbox_id = new_id(IdKind::Mailbox, context.platform());
    // Where its mail will be kept: D1, or (where the node is set so) its own
    // database from the start, with nothing to move (decision 0040).
    let own_database = context.node().config.new_mailboxes_in_own_databases;
    let mail_moved_at = own_database.then(|| context.now_ms());
    context.write(store::mailbox_created(&mailbox_id, &address, &display_name, context.now_ms(), mail_moved_at));
    context.on_constraint_violation("mailboxes.address", MailboxError::AddressTaken);
    context.audit_object(mailbox_id.clone());
    let mail = if own_database { "own_database" } else { "d1" };
    context.audit_detail(serde_json::json!({ "address": address, "display_name": display_name, "mail": mail }));
    Ok(context.json(&Mailbox {
        id: mailbox_id,
        address,
        display_name,
        created_at: rfc3339(context.now_ms()),
        held: Vec::new(),
        tools: Vec::new(),
    }))
}

/// `PATCH /api/mailboxes/:mailboxId`.
pub async fn update(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: UpdateMailbox = context.body()?;
    text::refuse_direction_controls("display_name", &request.display_name)?;
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    if !is_id_of(&mailbox_id, IdKind::Mailbox) {
        return Err(MailboxError::NoSuchMailbox { id: mailbox_id }.into());
    }
    let display_name = validate_display_name(&request.display_name)?;
    let current = store::mailbox(&mailbox_id);
    let holder = holder_of(context.caller(), context.now_ms()).ok_or_else(Refusal::internal)?;
    let [current, held] = context.read_array([current, tuples::relations_on(&holder, &mailbox_id)]).await?;
    let Some(row) = current.first() else {
        return Err(MailboxError::NoSuchMailbox { id: mailbox_id }.into());
    };
    let mut mailbox: MailboxRow = row.decode().map_err(|error| context.internal(error))?;
    // The answer names what the caller holds here, as every listing does.
    let held: Vec<String> = held.rows.iter().filter_map(|row| row.text("relation").ok()).collect();
    mailbox.held = Some(held.join(","));
    context.write(store::display_name_set(&mailbox_id, &display_name));
    context.audit_object(mailbox_id);
    context.audit_detail(serde_json::json!({ "from": mailbox.display_name, "to": display_name }));
    mailbox.display_name = display_name;
    Ok(context.json(&mailbox.present(None)))
}

/// Which of `mailbox_ids` are mailboxes of this node: one column, `id`.
pub fn mailboxes_among(mailbox_ids: &[String]) -> Statement {
    store::mailboxes_among(mailbox_ids)
}
