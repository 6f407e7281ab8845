//! The request and response bodies of every route, as Rust types.
//!
//! Handlers decode requests into these types and answer with them, and the JSON
//! Schemas in the OpenAPI document and the MCP catalogue are derived from them, so
//! a field's name, type and description are written once. Every field carries a
//! doc comment because it becomes the description a model reads.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::relation::ObjectKind;

/// The four-part refusal every 4xx (and, without detail, every 5xx) answers with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RefusalBody {
    /// The refusal itself.
    pub error: RefusalDetail,
}

/// What was refused, why, and what would change the answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RefusalDetail {
    /// A stable, machine-readable code, such as `not_found` or `missing_relation`.
    pub code: String,
    /// What was refused.
    pub message: String,
    /// Why it was refused.
    pub reason: String,
    /// What would change the answer.
    pub fix: String,
}

// ---------------------------------------------------------------- set-up and sessions

/// Creates the node's first administrator. Works once, with the `SETUP_TOKEN` secret.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetUpNode {
    /// The `SETUP_TOKEN` secret configured on the Worker (`wrangler secret put SETUP_TOKEN`).
    pub setup_token: String,
    /// The first administrator's email address; it is also their sign-in name.
    pub email: String,
    /// The first administrator's display name.
    pub name: String,
    /// The first administrator's password: at least 12 characters.
    pub password: String,
}

/// How a sign-in's session is carried.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionTransport {
    /// Tokens are returned in the body, for `Authorization: Bearer` (CLIs, MCP clients).
    #[default]
    Bearer,
    /// Tokens are set as `__Host-` HttpOnly cookies and left out of the body (browsers).
    Cookie,
}

/// Signs a person in with their email and password.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignIn {
    /// The person's email address.
    pub email: String,
    /// The person's password.
    pub password: String,
    /// `bearer` (default) returns the tokens in the body; `cookie` sets them as cookies.
    #[serde(default)]
    pub transport: SessionTransport,
}

/// Exchanges a refresh token for a new access token and a new refresh token.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefreshSession {
    /// The refresh token from sign-in or the last refresh. Omit it when the browser's
    /// refresh cookie carries it.
    #[serde(default)]
    pub refresh_token: Option<String>,
}

/// A session's credentials. Absent from the body when they travel as cookies.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SessionTokens {
    /// The session's id (`ses_…`).
    pub session_id: String,
    /// The short-lived access token: send it as `Authorization: Bearer <token>`.
    /// Absent when the session travels as cookies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_token: Option<String>,
    /// When the access token stops working (RFC 3339).
    pub access_token_expires_at: String,
    /// The refresh token: exchange it at `POST /api/sessions/refresh` before the access
    /// token expires. Each refresh returns a new one and retires the old. Absent when
    /// the session travels as cookies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the session ends, however often it is refreshed (RFC 3339).
    pub session_expires_at: String,
}

/// A signed-in session and who it belongs to.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SignedIn {
    /// The person who signed in.
    pub person: Person,
    /// The session's credentials.
    pub session: SessionTokens,
}

/// The answer to setting up the node.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct NodeSetUp {
    /// The first administrator, who can now sign in.
    pub administrator: Person,
}

/// The answer to signing out.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SignedOut {
    /// The session that was revoked (`ses_…`).
    pub session_id: String,
}

/// Changes the signed-in person's own password.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangePassword {
    /// The password in use now.
    pub current_password: String,
    /// The new password: at least 12 characters.
    pub new_password: String,
}

/// The answer to changing a password.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PasswordChanged {
    /// How many of the person's other sessions were signed out.
    pub other_sessions_revoked: u32,
}

// ---------------------------------------------------------------- people and teams

/// A person: someone who signs in with a password.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Person {
    /// The person's id (`usr_…`).
    pub id: String,
    /// The person's email address, which is also their sign-in name.
    pub email: String,
    /// The person's display name.
    pub name: String,
    /// When the person was created (RFC 3339).
    pub created_at: String,
    /// When the person was disabled (RFC 3339); absent while they may sign in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled_at: Option<String>,
}

/// Who the caller is.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Me {
    /// The caller's id (`usr_…` for a person).
    pub id: String,
    /// The kind of principal: `person` or `agent`.
    pub kind: String,
    /// The caller's display name.
    pub name: String,
    /// The caller's email address, for a person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Whether the caller holds `org.admin`.
    pub is_admin: bool,
    /// The teams the caller belongs to.
    pub teams: Vec<TeamReference>,
    /// The session in use (`ses_…`), for a person signed in with a session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// For an agent: the person whose authority it acts under (`usr_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sponsor: Option<String>,
}

/// A team named by id and name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TeamReference {
    /// The team's id (`tm_…`).
    pub id: String,
    /// The team's name.
    pub name: String,
}

/// Every person on the node.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PersonList {
    /// The people, oldest first.
    pub people: Vec<Person>,
}

/// Creates a person who can sign in.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePerson {
    /// The person's email address; it is also their sign-in name and must be unused.
    pub email: String,
    /// The person's display name.
    pub name: String,
    /// The person's first password: at least 12 characters. They can change it at
    /// `POST /api/me/password`.
    pub password: String,
}

/// A team: a named set of people. A relation granted to `tm_…#member` is held by
/// every member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Team {
    /// The team's id (`tm_…`).
    pub id: String,
    /// The team's name, unique on the node.
    pub name: String,
    /// When the team was created (RFC 3339).
    pub created_at: String,
    /// The ids (`usr_…`) of the team's members.
    pub members: Vec<String>,
}

/// Every team on the node.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct TeamList {
    /// The teams, oldest first.
    pub teams: Vec<Team>,
}

/// Creates a team.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTeam {
    /// The team's name: unique on the node, at most 100 characters.
    pub name: String,
}

// ---------------------------------------------------------------- relations

/// A relationship tuple: `subject` holds `relation` on `object`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RelationTuple {
    /// Who holds it: a person (`usr_…`), an agent (`agt_…`) or every member of a team (`tm_…#member`).
    pub subject: String,
    /// The relation held, such as `org.admin` or `mailbox.content.read`.
    pub relation: String,
    /// What it is held on: `org` for the organisation, or a mailbox (`mbx_…`).
    pub object: String,
    /// When it was granted (RFC 3339).
    pub granted_at: String,
    /// Who granted it.
    pub granted_by: String,
}

/// Relationship tuples.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RelationList {
    /// The tuples, ordered by object, relation and subject.
    pub relations: Vec<RelationTuple>,
}

/// Names one relationship tuple, to grant or to revoke.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelationChange {
    /// Who holds it: a person (`usr_…`), an agent (`agt_…`) or every member of a team (`tm_…#member`).
    pub subject: String,
    /// The relation: one of `org.admin`, `ediscovery.export`, `mailbox.metadata.read`,
    /// `mailbox.content.read`, `message.export`, `send.propose`, `approval.decide`.
    pub relation: String,
    /// What it is held on: `org` for an organisation relation, a mailbox id (`mbx_…`) for a mailbox relation.
    pub object: String,
}

// ---------------------------------------------------------------- audit

/// One row of the audit chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditEntry {
    /// The entry's position in the chain: contiguous from 1.
    pub seq: i64,
    /// When it happened (RFC 3339).
    pub at: String,
    /// Who acted: `usr_…`, `agt_…`, `src_…`, or absent for a caller who did not sign in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    /// The kind of actor, derived from the id: `person`, `agent`, `source` or `stranger`.
    pub actor_kind: String,
    /// For an agent: the person whose authority it acted under (`usr_…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delegator: Option<String>,
    /// The surface the call came through: `rest` or `mcp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub surface: Option<String>,
    /// The route acted through, by tool name, such as `grant_relation`.
    pub action: String,
    /// The object acted on, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// `ok`, or `refused` with the refusal's code in `detail`.
    pub outcome: String,
    /// Further facts about the act, as a JSON object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<serde_json::Value>,
    /// The previous entry's hash (64 zeros for the first).
    pub prev_hash: String,
    /// SHA-256 over a domain tag, `prev_hash` and the entry's canonical JSON.
    pub hash: String,
}

/// A page of the audit chain, newest first.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AuditPage {
    /// The entries, newest first.
    pub entries: Vec<AuditEntry>,
    /// Pass as `cursor` to get the next (older) page; null on the last page.
    pub next_cursor: Option<String>,
}

/// The chain's last entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChainHead {
    /// The last entry's `seq`.
    pub seq: i64,
    /// The last entry's hash. Record it outside the node to detect a truncated tail later.
    pub hash: String,
}

/// The result of recomputing part of the audit chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditVerification {
    /// Whether every entry checked links to its predecessor and hashes to its stored hash.
    pub intact: bool,
    /// How many entries were checked.
    pub checked: i64,
    /// The first entry that does not verify, or the first missing `seq`.
    pub first_bad_seq: Option<i64>,
    /// What is wrong at `first_bad_seq`.
    pub problem: Option<String>,
    /// The last entry checked.
    pub verified_through: Option<i64>,
    /// Pass as `after_seq` to continue verifying; absent when the whole chain was checked.
    pub next_after_seq: Option<i64>,
    /// The chain's last entry at the time of the check.
    pub head: Option<ChainHead>,
}

// ---------------------------------------------------------------- capabilities

/// The capability vocabulary administrators mint agents from.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CapabilityVocabulary {
    /// Every capability, in the order the mint form shows them.
    pub capabilities: Vec<PublishedCapability>,
    /// Every relation a tuple can name, in declaration order: what the
    /// capabilities' `requires` lists draw from, and what an administrator grants.
    pub relations: Vec<PublishedRelation>,
}

/// One relation of the vocabulary (SPEC §2).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PublishedRelation {
    /// The relation's name, such as `mailbox.content.read`.
    pub name: String,
    /// What it is held on: `organization` (the object `org`) or `mailbox` (an `mbx_…` id).
    pub on: ObjectKind,
    /// What holding it lets the holder do.
    pub description: String,
}

/// One capability: what it lets an agent do, and what it requires.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PublishedCapability {
    /// The capability's name, such as `mail.read`.
    pub name: String,
    /// One line for a list.
    pub summary: String,
    /// What an agent holding it can do.
    pub description: String,
    /// The relations the agent, and the person it acts for, must both hold on a
    /// mailbox for this capability to work there. Derived from its routes.
    pub requires: Vec<String>,
    /// Whether any of its routes reaches message content (bodies, attachments, originals).
    pub reaches_content: bool,
    /// The routes it grants; they are pinned to an agent when it is minted.
    pub routes: Vec<CapabilityRoute>,
}

/// A route as a capability lists it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CapabilityRoute {
    /// The route's tool name.
    pub tool: String,
    /// The HTTP method.
    pub method: String,
    /// The path, with `:name` parameters.
    pub path: String,
    /// What the route does, in one line.
    pub summary: String,
    /// Whether the route reaches message content.
    pub reaches_content: bool,
}

// ---------------------------------------------------------------- mailboxes

/// A mailbox: an address mail arrives at, shared by the people and agents who hold
/// relations on it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Mailbox {
    /// The mailbox's id (`mbx_…`).
    pub id: String,
    /// The address mail is delivered to, such as `support@example.com`.
    pub address: String,
    /// The name shown for the mailbox and used as the sender's name on mail it sends.
    pub display_name: String,
    /// When the mailbox was created (RFC 3339).
    pub created_at: String,
    /// The relations held on this mailbox, such as `mailbox.content.read`: the
    /// caller's, except on `list_person_mailboxes`, where they are that person's
    /// (directly or through a team).
    pub held: Vec<String>,
    /// The tools that `held` lets its holder call on this mailbox, as the
    /// contract declares each route's authority (a tool is a route's
    /// `operationId`): `get_message_body` where `mailbox.content.read` is held,
    /// for instance. For an agent, only those within its ceiling. What to offer,
    /// not a promise: each call is decided when it is made.
    pub tools: Vec<String>,
}

/// Mailboxes.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct MailboxList {
    /// The mailboxes, ordered by address.
    pub mailboxes: Vec<Mailbox>,
}

/// Creates a mailbox.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateMailbox {
    /// The address mail is delivered to; Email Routing must route it to this Worker.
    pub address: String,
    /// The name shown for the mailbox, at most 100 characters.
    pub display_name: String,
}

/// Renames a mailbox.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMailbox {
    /// The new display name, at most 100 characters.
    pub display_name: String,
}

// ---------------------------------------------------------------- messages

/// An email address with its display name, as a message header gave it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EmailAddress {
    /// The address, such as `ana@example.com`.
    pub address: String,
    /// The display name, when the header gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A received message's metadata: who, to whom, what about, when and how big.
/// Never its body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MessageSummary {
    /// The receipt's id (`rcp_…`): this message as delivered to this mailbox.
    pub id: String,
    /// The mailbox it was delivered to (`mbx_…`).
    pub mailbox_id: String,
    /// The sender from the From header, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<EmailAddress>,
    /// The To recipients.
    pub to: Vec<EmailAddress>,
    /// The Cc recipients.
    pub cc: Vec<EmailAddress>,
    /// The subject (empty when the message had none).
    pub subject: String,
    /// When the sender says it was sent (the Date header, RFC 3339), when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_at: Option<String>,
    /// When the node received it (RFC 3339).
    pub received_at: String,
    /// The message's size in bytes, as received.
    pub size: i64,
    /// How many attachments it carries.
    pub attachment_count: i64,
}

/// A page of a mailbox's messages, newest first.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct MessagePage {
    /// The messages on this page, newest first.
    pub messages: Vec<MessageSummary>,
    /// Pass as `cursor` to get the next (older) page; null on the last page.
    pub next_cursor: Option<String>,
}

/// An attachment's metadata.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AttachmentSummary {
    /// Its position among the message's attachments, from 0: the `attachmentIndex` to fetch it with.
    pub index: i64,
    /// Its file name, when the message gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its content type, such as `application/pdf`.
    pub content_type: String,
    /// Its size in bytes, decoded.
    pub size: i64,
}

/// A received message's full metadata, threading headers and attachment list
/// included. Never its body.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Message {
    /// The message's summary.
    #[serde(flatten)]
    pub summary: MessageSummary,
    /// The Message-ID header (without angle brackets).
    pub message_id: String,
    /// Where the sender asked replies to go (the Reply-To header); empty when a reply
    /// should go to the sender.
    pub reply_to: Vec<EmailAddress>,
    /// The In-Reply-To header's message ids.
    pub in_reply_to: Vec<String>,
    /// The References header's message ids, oldest first.
    pub references: Vec<String>,
    /// The attachments' names, types and sizes.
    pub attachments: Vec<AttachmentSummary>,
}

/// A received message's text.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct MessageBody {
    /// The receipt's id (`rcp_…`).
    pub id: String,
    /// The message's text. For a message with only an HTML body, a text rendering of it.
    pub text: String,
    /// `text` when the message had a plain-text body, `html` when the text was rendered from HTML.
    pub text_source: String,
    /// Whether the text was cut at the node's limit; the original has all of it.
    pub truncated: bool,
}

/// Where a search term matched.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SearchHit {
    /// The matching message's summary.
    #[serde(flatten)]
    pub message: MessageSummary,
    /// `headers` (sender, recipients or subject) or `body`. A body match is only ever
    /// reported in a mailbox where the caller reads content.
    pub matched_in: String,
    /// For a body match, the passage around the terms, with matches in [brackets].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

/// Search results, newest first.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SearchResults {
    /// The matching messages, newest first, each once.
    pub results: Vec<SearchHit>,
    /// Pass as `cursor`, with the same `q` and `mailbox`, to get the next (older)
    /// results; null on the last page.
    pub next_cursor: Option<String>,
}

// ---------------------------------------------------------------- sends

/// An outbound message: a draft, a send awaiting a second person's decision, or a
/// sealed send handed to the mail binding.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Send {
    /// The send's id (`snd_…`).
    pub id: String,
    /// The mailbox it is sent from (`mbx_…`).
    pub mailbox_id: String,
    /// The mailbox's address, which the mail is sent from.
    pub mailbox_address: String,
    /// `draft`, `submitted` (awaiting approval), `sealed` (approved and immutable),
    /// `dispatched` (handed to the mail binding), `failed` (the binding refused it) or
    /// `refused` (a second person declined it).
    pub state: String,
    /// Who wrote it (`usr_…` or `agt_…`).
    pub author: String,
    /// The author's name.
    pub author_name: String,
    /// The To recipients' addresses.
    pub to: Vec<String>,
    /// The Cc recipients' addresses.
    pub cc: Vec<String>,
    /// The subject.
    pub subject: String,
    /// The plain-text body.
    pub text: String,
    /// The received message this replies to (`rcp_…`), when it is a reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// The In-Reply-To message id it will carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<String>,
    /// The References message ids it will carry, oldest first.
    pub references: Vec<String>,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it was last edited (RFC 3339).
    pub updated_at: String,
    /// When it was submitted for approval (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitted_at: Option<String>,
    /// Who submitted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitted_by: Option<String>,
    /// When it was approved or refused (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<String>,
    /// Who approved or refused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// The name of who approved or refused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by_name: Option<String>,
    /// Why it was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal_reason: Option<String>,
    /// The Message-ID it was sealed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// SHA-256 of the sealed manifest, also written into the audit chain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_hash: Option<String>,
    /// Whether the send as stored still hashes to `manifest_hash`: false means its
    /// row was changed after sealing, outside the node. Absent when it was never
    /// sealed, or was sealed before the node recorded the sealed sender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_intact: Option<bool>,
    /// The From address it was sealed with (the mailbox's, at that moment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_from_address: Option<String>,
    /// The From name it was sealed with (the mailbox's display name, at that moment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_from_name: Option<String>,
    /// When the mail binding accepted it (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatched_at: Option<String>,
    /// Why the mail binding refused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_error: Option<String>,
    /// The envelope recipients the mail binding has accepted it for so far: all of
    /// them once dispatched, some or none when it failed.
    pub delivered_to: Vec<String>,
}

/// Sends.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SendList {
    /// The sends on this page, newest first.
    pub sends: Vec<Send>,
    /// Pass as `cursor`, with the same `state`, to get the next (older) page; null
    /// on the last page.
    pub next_cursor: Option<String>,
}

/// Starts a draft, new or in reply to a received message.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateDraft {
    /// The To recipients' addresses (at least one).
    pub to: Vec<String>,
    /// The Cc recipients' addresses.
    #[serde(default)]
    pub cc: Vec<String>,
    /// The subject, one line.
    pub subject: String,
    /// The plain-text body.
    pub text: String,
    /// A received message in the same mailbox (`rcp_…`) this replies to: the draft then
    /// carries its In-Reply-To and References headers.
    #[serde(default)]
    pub reply_to: Option<String>,
}

/// Edits a draft; fields left out are unchanged.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDraft {
    /// The To recipients' addresses (at least one).
    #[serde(default)]
    pub to: Option<Vec<String>>,
    /// The Cc recipients' addresses.
    #[serde(default)]
    pub cc: Option<Vec<String>>,
    /// The subject, one line.
    #[serde(default)]
    pub subject: Option<String>,
    /// The plain-text body.
    #[serde(default)]
    pub text: Option<String>,
}

/// Declines a submitted send.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefuseSend {
    /// Why it is refused, for the person who submitted it (at most 1,000 characters).
    pub reason: String,
}

/// The sends awaiting the caller's decision.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ApprovalQueue {
    /// Submitted sends in mailboxes where the caller holds approval.decide, that the
    /// caller did not submit, oldest first: those on this page.
    pub sends: Vec<Send>,
    /// Pass as `cursor` to get the next page (later submissions); null on the
    /// last page.
    pub next_cursor: Option<String>,
}

// ---------------------------------------------------------------- the MCP endpoint

/// One JSON-RPC 2.0 message for the Model Context Protocol: a request (with `id`),
/// or a notification (without). See the MCP specification for the methods.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct JsonRpcRequest {
    /// Always `2.0`.
    pub jsonrpc: String,
    /// The request's id; absent for a notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<serde_json::Value>,
    /// The method, such as `initialize`, `server/discover`, `tools/list` or `tools/call`.
    pub method: String,
    /// The method's parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A JSON-RPC 2.0 response: a `result` or an `error`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct JsonRpcResponse {
    /// Always `2.0`.
    pub jsonrpc: String,
    /// The id of the request answered (null when the request could not be read).
    pub id: serde_json::Value,
    /// The method's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Map<String, serde_json::Value>>,
    /// Why the request failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<JsonRpcError>,
}

/// A JSON-RPC 2.0 error.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct JsonRpcError {
    /// The error code: -32700 parse error, -32600 invalid request, -32601 method not
    /// found, -32602 invalid params (an unknown tool), -32020 header mismatch,
    /// -32022 unsupported protocol version.
    pub code: i64,
    /// What went wrong.
    pub message: String,
    /// Further facts, such as the supported protocol versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

// ---------------------------------------------------------------- agents

/// Relations to grant an agent on one mailbox at mint.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailboxGrant {
    /// The mailbox (`mbx_…`).
    pub mailbox: String,
    /// The relations to grant the agent there; the sponsor must hold each of them there.
    pub relations: Vec<String>,
}

/// How a new agent's credential is handed over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CredentialDelivery {
    /// The credential itself, shown once in the answer.
    #[default]
    Credential,
    /// A pairing code the agent's software redeems for the credential.
    PairingCode,
}

/// Mints an agent.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MintAgent {
    /// A name for the agent, such as "Invoice triage bot" (at most 100 characters).
    pub name: String,
    /// The person whose authority the agent acts under (`usr_…`); it can never do more than they can.
    pub sponsor: String,
    /// The capabilities to give it, by name (see list_agent_capabilities); expanded to routes and pinned.
    pub capabilities: Vec<String>,
    /// The mailboxes it may work on, with the relations it holds on each.
    #[serde(default)]
    pub mailboxes: Vec<MailboxGrant>,
    /// When its credential stops working (RFC 3339); absent for no expiry.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// `credential` (default) shows the credential once; `pairing_code` issues a code to redeem instead.
    #[serde(default)]
    pub delivery: CredentialDelivery,
}

/// How much of one capability an agent holds.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CapabilityHeld {
    /// The capability's name.
    pub name: String,
    /// How many of the capability's current routes are pinned to the agent.
    pub held: i64,
    /// How many routes the capability has now.
    pub total: i64,
}

/// An agent: a principal that acts in its own right under a sponsor's authority.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Agent {
    /// The agent's id (`agt_…`).
    pub id: String,
    /// Its name.
    pub name: String,
    /// The person whose authority it acts under (`usr_…`).
    pub sponsor: String,
    /// Whether its credential works now, and if not, why.
    pub state: AgentState,
    /// When it was minted (RFC 3339).
    pub created_at: String,
    /// Who minted it.
    pub created_by: String,
    /// When its credential stops working (RFC 3339), if ever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// When it was paused (RFC 3339), while it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<String>,
    /// When it was revoked (RFC 3339), if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    /// Its ceiling, held of total, per capability it holds any route of.
    pub capabilities: Vec<CapabilityHeld>,
    /// Pinned routes (tool names) that no current capability contains: still pinned, still checked.
    pub other_routes: Vec<String>,
    /// Every pinned route (tool names).
    pub routes: Vec<String>,
    /// The relations it holds, by mailbox.
    pub mailboxes: Vec<MailboxGrant>,
}

/// Whether an agent's credential works now. When several apply, the first in this
/// order is reported: revoked, expired, paused, awaiting pairing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    /// Paired and usable.
    Active,
    /// Minted, but no credential has been paired yet: a pairing code redeems one.
    AwaitingPairing,
    /// Refused until an administrator resumes it; its grants are kept.
    Paused,
    /// Its expiry has passed; the credential is refused for good.
    Expired,
    /// Revoked by an administrator; the credential is refused for good.
    Revoked,
}

/// Every agent.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AgentList {
    /// The agents, newest first.
    pub agents: Vec<Agent>,
}

/// A pairing code, shown once.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PairingCode {
    /// The agent it pairs (`agt_…`).
    pub agent_id: String,
    /// The code: give it to the agent's software, which redeems it at POST /api/agents/pair.
    pub code: String,
    /// When it stops working (RFC 3339), at most 10 minutes away.
    pub expires_at: String,
}

/// A newly minted agent, with its credential or pairing code, shown once.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct MintedAgent {
    /// The agent.
    pub agent: Agent,
    /// The credential (`mr_agt_…`), when delivered directly. Shown once; only its hash is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
    /// The pairing code, when delivered by pairing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing: Option<PairingCode>,
}

/// Redeems a pairing code.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedeemPairingCode {
    /// The pairing code the administrator issued.
    pub code: String,
}

/// An agent's credential, shown once.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AgentCredential {
    /// The agent (`agt_…`).
    pub agent_id: String,
    /// The credential: send it as `Authorization: Bearer mr_agt_…`. Shown once.
    pub credential: String,
}
