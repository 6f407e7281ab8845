//! What a route's parameters are: `PathParameter`, the segments of a path that
//! name something; `Parameter`, a query parameter with its words; and `Accepts`,
//! what either takes, from which its description and schema are generated and
//! against which the dispatcher checks it.

use crate::vocabulary::vocabulary;

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
        NoteId = "noteId": "The note's id in this conversation (`nte_…`), from list_notes.";
        SavedReplyId = "savedReplyId": "The saved reply's id (`svr_…`), from list_saved_replies.";
        ButlerId = "butlerId": "The butler's id (`btl_…`), from list_butlers.";
        WebhookId = "webhookId": "The webhook's id (`whk_…`), from its list.";
        PeerId = "peerId": "The peer's id (`per_…`), from list_peers.";
        PushConfigId = "pushConfigId": "The push config's id among the task's, from list_push_configs.";
        NotificationId = "notificationId": "The notification's id (`ntf_…`), from list_notifications.";
        ExportId = "exportId": "The export's id (`exp_…`), from list_exports.";
        ExportObjectId = "objectId": "The object's id from list_export_objects: `manifest`, or a message's `rcp_…`.";
        AttachmentIndex = "attachmentIndex": "The attachment's `index` from get_message, from 0.";
        Module = "module": "The module's file name, such as `mail.js`, as the page's import map names it.";
        SenderAddress = "senderAddress": "A sender's email address, such as `news@letters.example`, percent-encoded as a path segment; compared in lower case.";
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
            | PathParameter::SavedReplyId
            | PathParameter::NoteId
            | PathParameter::WebhookId
            | PathParameter::PeerId
            | PathParameter::PushConfigId
            | PathParameter::Module
            | PathParameter::SenderAddress => Accepts::Text,
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
