//! The shape of one route declaration: method, path, tool name, words for the
//! reader, parameters, schemas, exposure and authority.
//!
//! Everything a surface needs to know about a route is a field here or is derived
//! from one by a method here. Nothing in this module knows how a route is served.

use crate::relation::Relation;
use crate::route_id::RouteId;
use crate::vocabulary::vocabulary;
use schemars::JsonSchema;
#[cfg(feature = "schemas")]
use schemars::{Schema, SchemaGenerator};

/// An HTTP method a route answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    pub fn parse(method: &str) -> Option<Method> {
        match method {
            "GET" => Some(Method::Get),
            "POST" => Some(Method::Post),
            "PUT" => Some(Method::Put),
            "PATCH" => Some(Method::Patch),
            "DELETE" => Some(Method::Delete),
            _ => None,
        }
    }

    /// Whether a request with this method may change something. Only GET is safe;
    /// the contract declares no HEAD or OPTIONS routes.
    pub fn is_safe(self) -> bool {
        self == Method::Get
    }
}

/// The answer to "what should a machine be able to do here?", given once per route.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// Answers a question and changes nothing. Offered to machines.
    Read,
    /// Changes something a person can undo. Offered to machines.
    Act,
    /// Needs more than one person, or cannot be undone. Never offered.
    Governed,
    /// Installation, credentials and the administration of access. Never offered.
    Operator,
    /// The machine surface itself (`POST /mcp`). Never offered.
    Surface,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Read => "read",
            Tier::Act => "act",
            Tier::Governed => "governed",
            Tier::Operator => "operator",
            Tier::Surface => "surface",
        }
    }

    /// Whether a route of this tier may ever be offered to a machine.
    pub fn is_offerable(self) -> bool {
        matches!(self, Tier::Read | Tier::Act)
    }
}

/// How a route's tier is known. Reads are derived; everything else is a decision
/// somebody wrote down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exposure {
    /// A GET that answers a question: `read`, by derivation.
    Derived,
    /// A GET that is not a plain question (a page, a map of how to escalate, a read
    /// that changes something or spends someone else's authority), with its tier
    /// and the reason it is not `read`.
    Exception { tier: Tier, reason: &'static str },
    /// A route that changes something, classified by hand.
    Classified(Tier),
    /// A changing route nobody has classified yet. Building the registry fails on
    /// it, so a new route can never be silently offered or silently withheld.
    Unclassified,
}

/// What a caller must hold to be answered by a route, as data. The dispatcher
/// enforces exactly this; capabilities, the mint form and the tests read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Authority {
    /// Anyone, signed in or not; any credential presented is ignored, so the call
    /// acts as a stranger (setup, sign-in, the page).
    Public,
    /// Anyone; a caller who presents a credential is identified by it and answered
    /// as itself, and one who presents none is a stranger (the MCP endpoint).
    Open,
    /// Any signed-in person or agent.
    Member,
    /// A relation held on the organisation.
    Organization(Relation),
    /// Answers every member; the rows are filtered to what the caller may see:
    /// rows on mailboxes where it holds every one of `all_of` and, when `any_of`
    /// is not empty, one of `any_of` (as for `Mailbox`, `all_of` is what a
    /// capability requires). `machine_visible` says whether an agent could ever
    /// see a row: a filter no machine satisfies (decisions that need a second
    /// person) would answer an agent with an empty list for ever, so such a route
    /// is not grantable.
    Filtered { machine_visible: bool, all_of: &'static [Relation], any_of: &'static [Relation] },
    /// The person named by the path parameter, or an administrator.
    SelfOrAdmin { person_parameter: PathParameter },
    /// Relations on the mailbox the path parameter names: every one of `all_of`
    /// and, when `any_of` is not empty, at least one of `any_of`.
    Mailbox { mailbox_parameter: PathParameter, all_of: &'static [Relation], any_of: &'static [Relation] },
    /// The caller's own person-scoped data: a person's own, an agent's sponsor's.
    /// Every member is admitted; what "own" means is the handler's scope, as rows
    /// are a `Filtered` route's.
    Personal,
    /// Objects the caller requested (an export), while it still holds the
    /// relation on the organisation that let it request them. The dispatcher
    /// checks the relation; the object is looked up by its requester and the
    /// caller together, so anyone else's answers as one that does not exist (a
    /// native test drives every such route as a second holder of the relation).
    Requester(Relation),
    /// A reminder source's own credential (`mr_src_…`): the handler touches only
    /// that source's events. No person or agent is admitted, and a source is
    /// admitted nowhere else.
    Source,
    /// The agent the path parameter names: its sponsor, or an administrator
    /// (the owner plane of an agent's messaging). No machine is ever admitted.
    Sponsor { agent_parameter: PathParameter },
}

/// A part of the node an operator turns on (a `FEATURE_…` variable). Off, every
/// route of it refuses with `feature_disabled` before anything else is read,
/// and its tools are in no catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// Agent messaging and the A2A gateway (`FEATURE_AGENT_NETWORK`).
    AgentNetwork,
}

impl Feature {
    /// The variable that turns it on, set to `true` in `wrangler.toml`.
    pub fn variable(self) -> &'static str {
        match self {
            Feature::AgentNetwork => "FEATURE_AGENT_NETWORK",
        }
    }

    /// What it is, in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            Feature::AgentNetwork => "agent messaging",
        }
    }
}

/// Whether `held`, the relations held on one mailbox, meet a mailbox authority's
/// `all_of` and `any_of`: see [`Authority::met_on_mailbox`].
pub fn mailbox_relations_met(all_of: &[Relation], any_of: &[Relation], held: &[Relation]) -> bool {
    !held.is_empty()
        && all_of.iter().all(|relation| held.contains(relation))
        && (any_of.is_empty() || any_of.iter().any(|relation| held.contains(relation)))
}

impl Authority {
    /// Whether a machine (an agent) can ever be provisioned to satisfy this
    /// authority. Organisation relations are never conferred on agents, and a
    /// route that is a person's own or an administrator's has no agent half.
    pub fn machine_provisionable(&self) -> bool {
        match self {
            Authority::Public
            | Authority::Open
            | Authority::Member
            | Authority::Filtered { machine_visible: true, .. }
            | Authority::Mailbox { .. }
            | Authority::Personal => true,
            Authority::Organization(_)
            | Authority::Requester(_)
            | Authority::SelfOrAdmin { .. }
            | Authority::Source
            | Authority::Sponsor { .. }
            | Authority::Filtered { machine_visible: false, .. } => false,
        }
    }

    /// The relations a caller must hold on a mailbox for this authority to let it
    /// act there, or see rows there: every one of `all_of`. `any_of` contributes
    /// nothing, because a route satisfied by either of two relations cannot say
    /// which one to grant.
    pub fn required_relations(&self) -> &'static [Relation] {
        match self {
            Authority::Mailbox { all_of, .. } | Authority::Filtered { all_of, .. } => all_of,
            _ => &[],
        }
    }

    /// Whether the relations held on one mailbox meet this authority there:
    /// something is held, every one of `all_of`, and one of `any_of` when it
    /// names any. False for every authority that is not a mailbox's. The rule
    /// itself, read by the dispatcher's check, the MCP catalogue and the
    /// mailbox listings' `tools` alike.
    pub fn met_on_mailbox(&self, held: &[Relation]) -> bool {
        match self {
            Authority::Mailbox { all_of, any_of, .. } => mailbox_relations_met(all_of, any_of, held),
            _ => false,
        }
    }

    /// For a route that names no mailbox, the relations that make a mailbox's rows
    /// appear in its answer: (`all_of`, `any_of`).
    pub fn rows_where(&self) -> Option<(&'static [Relation], &'static [Relation])> {
        match self {
            Authority::Filtered { all_of, any_of, .. } => Some((all_of, any_of)),
            _ => None,
        }
    }

    /// The authority in a sentence, for documents a person or a model reads,
    /// naming a path parameter as the path does (`mailboxId`).
    pub fn describe(&self) -> String {
        self.describe_naming(|parameter| parameter.name().to_string())
    }

    /// The authority in a sentence, naming a path parameter by `name`: the MCP
    /// tools name it as their argument (`mailbox_id`), not as the path does.
    pub fn describe_naming(&self, name: impl Fn(PathParameter) -> String) -> String {
        let names =
            |relations: &[Relation]| relations.iter().map(|relation| relation.name()).collect::<Vec<_>>().join(", ");
        match self {
            Authority::Public => "Anyone, signed in or not.".into(),
            Authority::Open => "Anyone; a caller who presents a credential is answered as itself.".into(),
            Authority::Member => "Any signed-in person or agent.".into(),
            Authority::Organization(relation) => {
                format!("Holders of {} on the organisation.", relation.name())
            }
            Authority::Filtered { all_of, any_of, .. } => {
                let mut sentence =
                    "Any signed-in person or agent; the answer holds only mailboxes where the caller holds "
                        .to_string();
                match (all_of.is_empty(), any_of.is_empty()) {
                    (false, true) => sentence.push_str(&format!("all of {}.", names(all_of))),
                    (true, false) => sentence.push_str(&format!("any of {}.", names(any_of))),
                    _ => sentence.push_str(&format!("all of {}, and any of {}.", names(all_of), names(any_of))),
                }
                sentence
            }
            Authority::SelfOrAdmin { person_parameter } => {
                format!("The person named by `{}`, or a holder of org.admin.", name(*person_parameter))
            }
            Authority::Mailbox { mailbox_parameter, all_of, any_of } => {
                let mut sentence = format!("On the mailbox named by `{}`: ", name(*mailbox_parameter));
                match (all_of.is_empty(), any_of.is_empty()) {
                    (false, true) => sentence.push_str(&format!("all of {}.", names(all_of))),
                    (true, false) => sentence.push_str(&format!("any of {}.", names(any_of))),
                    (false, false) => {
                        sentence.push_str(&format!("all of {}, and any of {}.", names(all_of), names(any_of)))
                    }
                    (true, true) => sentence.push_str("nothing more than membership."),
                }
                sentence
            }
            Authority::Personal => "The caller's own person-scoped data (for an agent, its sponsor's).".into(),
            Authority::Requester(relation) => {
                format!("The person who requested it, while they hold {} on the organisation.", relation.name())
            }
            Authority::Source => {
                "A reminder source, with its own `mr_src_` credential; only that source's events.".into()
            }
            Authority::Sponsor { agent_parameter } => {
                format!("The sponsor of the agent named by `{}`, or a holder of org.admin.", name(*agent_parameter))
            }
        }
    }
}

vocabulary! {
    /// A segment of a path that names something. An enum, so a handler asking
    /// for a parameter that does not exist does not compile, and the registry
    /// refuses a route whose path and declaration disagree.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum PathParameter {
        PersonId = "personId": "The person's id (`usr_…`).";
        AgentId = "agentId": "The agent's id (`agt_…`).";
        TeamId = "teamId": "The team's id (`tm_…`).";
        MailboxId = "mailboxId": "The mailbox's id (`mbx_…`).";
        ReceiptId = "receiptId": "The received message's id in this mailbox (`rcp_…`), from the message list or a search.";
        SendId = "sendId": "The send's id (`snd_…`).";
        ThreadId = "threadId": "The conversation's id in this mailbox (`thr_…`), from list_threads.";
        EventId = "eventId": "The event's id (`evt_…`).";
        SourceId = "sourceId": "The reminder source's id (`src_…`).";
        AgentMessageId = "agentMessageId": "The agent message's id (`amg_…`).";
        ConversationId = "conversationId": "The conversation's id (`cnv_…`).";
        ButlerId = "butlerId": "The butler's id (`btl_…`), from list_butlers.";
        NotificationId = "notificationId": "The notification's id (`ntf_…`), from list_notifications.";
        ExportId = "exportId": "The export's id (`exp_…`), from list_exports.";
        ExportObjectId = "objectId": "The object's id from list_export_objects: `manifest`, or a message's `rcp_…`.";
        AttachmentIndex = "attachmentIndex": "The attachment's `index` from get_message, from 0.";
        Module = "module": "The module's file name, such as `mail.js`, as the page's import map names it.";
    }
}

/// What a query or path parameter accepts. The dispatcher refuses anything else
/// before a handler runs, and the parameter's description and schema are
/// generated from it, so the documented range and the enforced one are one fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accepts {
    /// Any text; the route judges it.
    Text,
    /// How many items a page holds: a whole number from 1 to `maximum`, `default`
    /// when absent. `items` names them for the description ("results").
    PageSize { items: &'static str, default: u32, maximum: u32 },
    /// A whole number no smaller than `minimum`, such as a position in the audit
    /// chain or in a message's attachments.
    WholeNumber { minimum: i64 },
    /// One of a fixed set of words, such as a state.
    OneOf(&'static [&'static str]),
    /// One or more of a fixed set of words, separated by commas (`queued,held`).
    SomeOf(&'static [&'static str]),
    /// `true` or `false`; absent is false.
    Flag,
}

impl Accepts {
    /// What a value must be, in words, for a refusal; `None` when any text will do.
    pub fn expects(self) -> Option<String> {
        match self {
            Accepts::Text => None,
            Accepts::PageSize { maximum, .. } => Some(format!("a whole number from 1 to {maximum}")),
            Accepts::WholeNumber { minimum } => Some(format!("a whole number, {minimum} or more")),
            Accepts::OneOf(values) => Some(format!("one of {}", values.join(", "))),
            Accepts::SomeOf(values) => Some(format!("one or more of {}, separated by commas", values.join(", "))),
            Accepts::Flag => Some("true or false".into()),
        }
    }

    /// Whether `value`, as it arrived in the path or query, is one this accepts.
    pub fn admits(self, value: &str) -> bool {
        match self {
            Accepts::Text => true,
            Accepts::PageSize { maximum, .. } => value.parse::<u32>().is_ok_and(|size| (1..=maximum).contains(&size)),
            Accepts::WholeNumber { minimum } => value.parse::<i64>().is_ok_and(|number| number >= minimum),
            Accepts::OneOf(values) => values.contains(&value),
            Accepts::SomeOf(values) => value.split(',').all(|word| values.contains(&word)),
            Accepts::Flag => value == "true" || value == "false",
        }
    }

    /// Its JSON Schema, without a description: an integer is an integer, so a
    /// client generated from the document sends a number, not text.
    pub fn schema(self) -> serde_json::Value {
        match self {
            Accepts::Text => serde_json::json!({ "type": "string" }),
            Accepts::PageSize { default, maximum, .. } => {
                serde_json::json!({ "type": "integer", "minimum": 1, "maximum": maximum, "default": default })
            }
            // The maximum is the dispatcher's too (a 64-bit integer), so a value a
            // client generates within the schema is one the node accepts.
            Accepts::WholeNumber { minimum } => {
                serde_json::json!({ "type": "integer", "minimum": minimum, "maximum": i64::MAX })
            }
            Accepts::OneOf(values) => serde_json::json!({ "type": "string", "enum": values }),
            Accepts::SomeOf(values) => {
                let word = values.join("|");
                serde_json::json!({ "type": "string", "pattern": format!("^({word})(,({word}))*$") })
            }
            Accepts::Flag => serde_json::json!({ "type": "boolean", "default": false }),
        }
    }
}

impl PathParameter {
    /// What the segment accepts: an id or a name is text the route looks up; a
    /// position is a whole number. Exhaustive, so a new parameter is typed by
    /// whoever adds it.
    pub fn accepts(self) -> Accepts {
        match self {
            PathParameter::AttachmentIndex => Accepts::WholeNumber { minimum: 0 },
            PathParameter::PersonId
            | PathParameter::AgentId
            | PathParameter::TeamId
            | PathParameter::MailboxId
            | PathParameter::ReceiptId
            | PathParameter::SendId
            | PathParameter::ThreadId
            | PathParameter::EventId
            | PathParameter::SourceId
            | PathParameter::AgentMessageId
            | PathParameter::ConversationId
            | PathParameter::NotificationId
            | PathParameter::ExportId
            | PathParameter::ExportObjectId
            | PathParameter::ButlerId
            | PathParameter::Module => Accepts::Text,
        }
    }

    /// Its JSON Schema, as OpenAPI and the MCP tools describe it.
    pub fn schema(self) -> serde_json::Value {
        let mut schema = self.accepts().schema();
        schema["description"] = self.description().into();
        schema
    }
}

/// A query parameter, with the words a reader needs to use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parameter {
    pub name: &'static str,
    /// What it does. For a page size the whole sentence is generated instead.
    pub description: &'static str,
    pub accepts: Accepts,
    /// Whether the route cannot be answered without it: the dispatcher refuses
    /// a request that leaves it out as missing, naming it, before anything is
    /// looked up (never as a 404 for the empty value), and OpenAPI and the MCP
    /// tools list it as required.
    pub required: bool,
}

impl Parameter {
    /// A parameter that takes any text.
    pub const fn text(name: &'static str, description: &'static str) -> Parameter {
        Parameter { name, description, accepts: Accepts::Text, required: false }
    }

    /// The `limit` of a paged list: `items` per page, `default` and at most `maximum`.
    pub const fn page_size(items: &'static str, default: u32, maximum: u32) -> Parameter {
        Parameter {
            name: "limit",
            description: "",
            accepts: Accepts::PageSize { items, default, maximum },
            required: false,
        }
    }

    /// A parameter that takes a whole number, `minimum` or more.
    pub const fn whole_number(name: &'static str, description: &'static str, minimum: i64) -> Parameter {
        Parameter { name, description, accepts: Accepts::WholeNumber { minimum }, required: false }
    }

    /// A parameter that takes one of `values`.
    pub const fn one_of(name: &'static str, description: &'static str, values: &'static [&'static str]) -> Parameter {
        Parameter { name, description, accepts: Accepts::OneOf(values), required: false }
    }

    /// A parameter that takes one or more of `values`, separated by commas.
    pub const fn some_of(name: &'static str, description: &'static str, values: &'static [&'static str]) -> Parameter {
        Parameter { name, description, accepts: Accepts::SomeOf(values), required: false }
    }

    /// A parameter that is `true` or `false`, false when absent.
    pub const fn flag(name: &'static str, description: &'static str) -> Parameter {
        Parameter { name, description, accepts: Accepts::Flag, required: false }
    }

    /// The same parameter, which the route cannot be answered without.
    pub const fn required(mut self) -> Parameter {
        self.required = true;
        self
    }

    /// The description a reader sees, with what it accepts.
    pub fn describe(&self) -> String {
        match self.accepts {
            Accepts::Text => self.description.to_string(),
            Accepts::PageSize { items, default, maximum } => {
                let items = if items.is_empty() { String::new() } else { format!(" {items}") };
                format!("How many{items} to return: 1 to {maximum}, default {default}.")
            }
            Accepts::WholeNumber { minimum } => format!("{} A whole number, {minimum} or more.", self.description),
            Accepts::OneOf(values) => format!("{} One of: {}.", self.description, values.join(", ")),
            Accepts::SomeOf(values) => {
                format!("{} One or more of: {}, separated by commas.", self.description, values.join(", "))
            }
            Accepts::Flag => format!("{} true or false; default false.", self.description),
        }
    }

    /// What a value must be, in words, for a refusal; `None` when any text will do.
    pub fn expects(&self) -> Option<String> {
        self.accepts.expects()
    }

    /// Whether `value` is one this parameter accepts.
    pub fn accepts(&self, value: &str) -> bool {
        self.accepts.admits(value)
    }

    /// Its JSON Schema, as OpenAPI and the MCP tools describe it.
    pub fn schema(&self) -> serde_json::Value {
        let mut schema = self.accepts.schema();
        schema["description"] = self.describe().into();
        schema
    }
}

/// A refusal a route's own handler gives, which nothing else in its declaration
/// shows, with the words that say when. The status follows from the kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refuses {
    /// 401 on a route anyone may call: a secret the body carries (a password, a
    /// refresh token, a pairing code) is wrong, expired or spent.
    WrongSecret(&'static str),
    /// 403: a rule of the handler's own refuses this caller, beyond the route's
    /// declared authority (only the author edits a draft).
    Forbidden(&'static str),
    /// 404: something the body or query names does not exist, or the caller may
    /// not know that it does.
    NotFound(&'static str),
    /// 409: what the route acts on is not in a state that allows it, or another
    /// change won a race for it.
    Conflict(&'static str),
    /// 429: too many failed attempts; `Retry-After` says when to try again.
    TooManyAttempts(&'static str),
    /// An error of the machine surface's own protocol (JSON-RPC), answered with
    /// this HTTP status and a JSON-RPC error rather than the four-part refusal.
    JsonRpc { status: u16, when: &'static str },
    /// An error of an OAuth endpoint's own protocol, answered with this HTTP
    /// status and OAuth's error body (RFC 6749 §5.2) rather than the refusal.
    OAuth { status: u16, when: &'static str },
}

impl Refuses {
    /// The HTTP status it is answered with.
    pub fn status(self) -> u16 {
        match self {
            Refuses::WrongSecret(_) => 401,
            Refuses::Forbidden(_) => 403,
            Refuses::NotFound(_) => 404,
            Refuses::Conflict(_) => 409,
            Refuses::TooManyAttempts(_) => 429,
            Refuses::JsonRpc { status, .. } | Refuses::OAuth { status, .. } => status,
        }
    }

    /// When the handler gives it, in the declaration's words.
    pub fn when(self) -> &'static str {
        match self {
            Refuses::WrongSecret(when)
            | Refuses::Forbidden(when)
            | Refuses::NotFound(when)
            | Refuses::Conflict(when)
            | Refuses::TooManyAttempts(when)
            | Refuses::JsonRpc { when, .. }
            | Refuses::OAuth { when, .. } => when,
        }
    }

    /// Whether it is answered as a JSON-RPC error rather than a refusal.
    pub fn is_json_rpc(self) -> bool {
        matches!(self, Refuses::JsonRpc { .. })
    }

    /// Whether it is answered as an OAuth error rather than a refusal.
    pub fn is_oauth(self) -> bool {
        matches!(self, Refuses::OAuth { .. })
    }
}

/// What a route's successful answer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Produces {
    /// `application/json`, described by the route's response schema.
    Json,
    /// `text/html`: a page for a browser.
    Html,
    /// `text/javascript`: one of the browser interface's script modules.
    Script,
    /// `message/rfc822`: an original message, byte for byte.
    Message,
    /// An attachment's bytes, with the content type the message gave them.
    Attachment,
    /// An export's object: its manifest (`application/json`, the route's response
    /// schema) or one original message (`message/rfc822`).
    ExportObject,
    /// A JSON-RPC message (the MCP endpoint): a response, or 202 with no body for
    /// a notification.
    JsonRpc,
    /// An OAuth endpoint's JSON (RFC 6749, 7591): its own errors are OAuth's
    /// `{error, error_description}`, which standard clients read, not the refusal.
    OAuth,
}

/// Builds the JSON Schema of a request or response type, registering any
/// definitions it refers to with the generator.
#[cfg(feature = "schemas")]
pub type SchemaFunction = fn(&mut SchemaGenerator) -> Schema;
/// Without the `schemas` feature a route records only that it has a body.
#[cfg(not(feature = "schemas"))]
pub type SchemaFunction = ();

#[cfg(feature = "schemas")]
fn subschema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// One route, declared once.
#[derive(Clone, Copy, Debug)]
pub struct Route {
    pub id: RouteId,
    pub method: Method,
    /// The path with `:name` segments for path parameters.
    pub path: &'static str,
    /// The MCP tool name and the audit action: `[a-z0-9_]`, at most 40 characters.
    pub tool: &'static str,
    /// One line, for a list.
    pub summary: &'static str,
    /// What the route does and when to use it, written for the model that reads
    /// it. Kept only with the `schemas` feature: the Worker hands it out only
    /// inside the documents generated from the contract (its MCP catalogue is
    /// `contract/tools.json` as generated), so its own build leaves it empty.
    pub description: &'static str,
    pub path_parameters: &'static [PathParameter],
    pub query_parameters: &'static [Parameter],
    pub request: Option<SchemaFunction>,
    /// Whether the body is a form (`application/x-www-form-urlencoded`, as
    /// OAuth's token and revocation endpoints take) rather than JSON.
    pub request_is_form: bool,
    pub response: Option<SchemaFunction>,
    pub produces: Produces,
    /// The status of a successful answer.
    pub success_status: u16,
    pub exposure: Exposure,
    pub authority: Authority,
    /// Why agents are never offered this route, in the route's own words, where
    /// the reason derived from its tier and authority would be too general.
    pub withheld_because: Option<&'static str>,
    /// Whether `.authority(…)` was called. A route that never says who may call it
    /// does not build: no default is safe for every route.
    pub authority_declared: bool,
    /// Whether the route reaches message bytes (bodies, attachments, originals).
    pub reaches_content: bool,
    /// The refusals its handler gives that nothing else in the declaration shows;
    /// every other status it answers is derived (`statuses::answers`).
    pub refuses: &'static [Refuses],
    /// The feature it belongs to, if it is one an operator turns on.
    pub feature: Option<Feature>,
    /// A POST that answers without storing anything (an OAuth client's
    /// registration, carried in its signed id): nothing to record, so a
    /// stranger calling it cannot make the node write.
    pub stores_nothing: bool,
    /// Whether the path is also answered with one trailing slash: an endpoint
    /// a client is configured with by URL, which some clients join a path to
    /// (httpx's `base_url` makes `/a2a/agt_1` into `/a2a/agt_1/`).
    pub trailing_slash: bool,
}

impl Route {
    /// Starts a declaration. Every other field has the conservative default: no
    /// parameters, no schemas, unclassified, no content, no refusals of the
    /// handler's own; the authority must be
    /// declared (the registry refuses a route without one).
    pub fn new(id: RouteId, method: Method, path: &'static str, tool: &'static str) -> Route {
        Route {
            id,
            method,
            path,
            tool,
            summary: "",
            description: "",
            path_parameters: &[],
            query_parameters: &[],
            request: None,
            request_is_form: false,
            response: None,
            produces: Produces::Json,
            success_status: 200,
            exposure: if method.is_safe() { Exposure::Derived } else { Exposure::Unclassified },
            authority: Authority::Member,
            withheld_because: None,
            authority_declared: false,
            reaches_content: false,
            refuses: &[],
            feature: None,
            stores_nothing: false,
            trailing_slash: false,
        }
    }

    /// Declares that the route stores nothing, so it is not recorded.
    pub fn stores_nothing(mut self) -> Route {
        self.stores_nothing = true;
        self
    }

    /// Answers the path with one trailing slash as well (see `trailing_slash`).
    pub fn trailing_slash(mut self) -> Route {
        self.trailing_slash = true;
        self
    }

    /// Puts the route in a feature an operator turns on.
    pub fn feature(mut self, feature: Feature) -> Route {
        self.feature = Some(feature);
        self
    }

    pub fn summary(mut self, summary: &'static str) -> Route {
        self.summary = summary;
        self
    }

    pub fn description(mut self, description: &'static str) -> Route {
        if cfg!(feature = "schemas") {
            self.description = description;
        }
        self
    }

    pub fn path_parameters(mut self, parameters: &'static [PathParameter]) -> Route {
        self.path_parameters = parameters;
        self
    }

    pub fn query_parameters(mut self, parameters: &'static [Parameter]) -> Route {
        self.query_parameters = parameters;
        self
    }

    pub fn request<T: JsonSchema>(mut self) -> Route {
        #[cfg(feature = "schemas")]
        let schema: SchemaFunction = subschema::<T>;
        #[cfg(not(feature = "schemas"))]
        let schema: SchemaFunction = ();
        self.request = Some(schema);
        self
    }

    /// A body sent as a form (`application/x-www-form-urlencoded`), its fields
    /// described by `T`.
    pub fn form_request<T: JsonSchema>(mut self) -> Route {
        self = self.request::<T>();
        self.request_is_form = true;
        self
    }

    pub fn response<T: JsonSchema>(mut self) -> Route {
        #[cfg(feature = "schemas")]
        let schema: SchemaFunction = subschema::<T>;
        #[cfg(not(feature = "schemas"))]
        let schema: SchemaFunction = ();
        self.response = Some(schema);
        self
    }

    pub fn html(mut self) -> Route {
        self.produces = Produces::Html;
        self
    }

    pub fn produces(mut self, produces: Produces) -> Route {
        self.produces = produces;
        self
    }

    pub fn created(mut self) -> Route {
        self.success_status = 201;
        self
    }

    /// Answers 202: accepted, stored, and handled later (a message to an agent).
    pub fn accepted(mut self) -> Route {
        self.success_status = 202;
        self
    }

    /// Classifies a changing route by hand.
    pub fn tier(mut self, tier: Tier) -> Route {
        self.exposure = Exposure::Classified(tier);
        self
    }

    /// Takes a GET out of the derived `read` tier, with the reason why.
    pub fn exception(mut self, tier: Tier, reason: &'static str) -> Route {
        self.exposure = Exposure::Exception { tier, reason };
        self
    }

    pub fn authority(mut self, authority: Authority) -> Route {
        self.authority = authority;
        self.authority_declared = true;
        self
    }

    /// Says, in this route's own words, why it is never offered to an agent. Only
    /// for a route that is not grantable; the registry refuses it on one that is.
    pub fn withheld_because(mut self, reason: &'static str) -> Route {
        self.withheld_because = Some(reason);
        self
    }

    pub fn reaches_content(mut self) -> Route {
        self.reaches_content = true;
        self
    }

    /// The refusals the route's handler gives that its declaration cannot show
    /// otherwise (a send in the wrong state, too many guesses), each with when.
    pub fn refuses(mut self, refusals: &'static [Refuses]) -> Route {
        self.refuses = refusals;
        self
    }

    /// The route's tier, or why it has none. A GET is `read` unless it is a named
    /// exception; a changing route has exactly the tier it was classified with.
    pub fn derive_tier(&self) -> Result<Tier, &'static str> {
        match (self.method.is_safe(), self.exposure) {
            (true, Exposure::Derived) => Ok(Tier::Read),
            (true, Exposure::Exception { tier, reason }) => {
                if reason.trim().is_empty() {
                    Err("a GET exception must say why it is not a read")
                } else if tier == Tier::Read {
                    Err("a GET exception to the read tier cannot itself be read")
                } else {
                    Ok(tier)
                }
            }
            (true, Exposure::Classified(_)) => {
                Err("a GET is classified by derivation or as a named exception, not by hand")
            }
            (true, Exposure::Unclassified) => Err("a GET cannot be unclassified"),
            (false, Exposure::Classified(tier)) => Ok(tier),
            (false, Exposure::Unclassified | Exposure::Derived) => Err(
                "this route changes something and nobody has decided its tier: classify it with .tier(..) as act, governed, operator or surface",
            ),
            (false, Exposure::Exception { .. }) => {
                Err("only a GET can be an exception to the derived read tier; classify a changing route with .tier(..)")
            }
        }
    }

    /// The names of the `:name` segments of the path, in order.
    pub fn path_parameter_names(&self) -> impl Iterator<Item = &'static str> {
        self.path.split('/').filter_map(|segment| segment.strip_prefix(':'))
    }

    /// The query parameter named `name`, if the route takes one.
    pub fn query_parameter(&self, name: &str) -> Option<&'static Parameter> {
        self.query_parameters.iter().find(|parameter| parameter.name == name)
    }

    /// The path parameter naming the mailbox or person its authority is judged
    /// on, if it names one.
    pub fn authority_parameter(&self) -> Option<PathParameter> {
        match self.authority {
            Authority::SelfOrAdmin { person_parameter } => Some(person_parameter),
            Authority::Mailbox { mailbox_parameter, .. } => Some(mailbox_parameter),
            Authority::Sponsor { agent_parameter } => Some(agent_parameter),
            _ => None,
        }
    }
}
