//! The four-part refusal, and the one place every domain's errors become one.
//!
//! A refusal is an answer written to be acted on: what was refused, why, and what
//! would change the answer. Each domain owns an error enum naming what can go
//! wrong in its own words; this module maps every one of them to a status, a code
//! and the sentences a person or a model reads. Internal failures map to a single
//! detail-free 500, so nothing about storage or code ever reaches a client.

use mailroom_contract::api::{RefusalBody, RefusalDetail, SendState};
use mailroom_contract::{ObjectKind, Relation, Tier, registry};

use crate::agents::AgentError;
use crate::audit::AuditError;
use crate::authz::AuthorityError;
use crate::credentials::AuthenticationError;
use crate::dispatch::RequestError;
use crate::mailboxes::MailboxError;
use crate::mcp::WithheldTool;
use crate::messages::MessageError;
use crate::people::PersonError;
use crate::relations::RelationError;
use crate::search::SearchError;
use crate::sends::SendError;
use crate::sessions::SessionError;
use crate::setup::SetupError;
use crate::teams::TeamError;

/// A refusal, ready to be answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
    pub reason: String,
    pub fix: String,
    /// Sent as `Retry-After` when waiting would change the answer.
    pub retry_after_seconds: Option<u32>,
    /// Sent as `Allow` on a 405.
    pub allow: Option<String>,
}

impl Refusal {
    pub fn new(
        status: u16,
        code: &'static str,
        message: impl Into<String>,
        reason: impl Into<String>,
        fix: impl Into<String>,
    ) -> Refusal {
        Refusal {
            status,
            code,
            message: message.into(),
            reason: reason.into(),
            fix: fix.into(),
            retry_after_seconds: None,
            allow: None,
        }
    }

    /// The answer to anything that went wrong inside the node. Deliberately says
    /// nothing about what: the detail goes to the operator's log.
    pub fn internal() -> Refusal {
        Refusal::new(
            500,
            "internal_error",
            "The node could not complete this request.",
            "Something failed inside the node; the details are in the operator's logs, not here.",
            "Try again. If it keeps failing, tell the node's operator the time of the request.",
        )
    }

    /// The answer when the audit chain stayed contended through every retry. The
    /// change was not applied, so nothing is lost by trying again.
    pub fn busy() -> Refusal {
        let mut refusal = Refusal::new(
            503,
            "busy",
            "The node is busy and did not apply this change.",
            "Many changes arrived at once and this one could not take its place in the audit chain; it was rolled back.",
            "Try again in a moment; nothing was changed.",
        );
        refusal.retry_after_seconds = Some(1);
        refusal
    }

    /// The answer when the deployment lacks something it needs. Names the missing
    /// setting (an operator's fix), never a value.
    pub fn misconfigured(what: &str) -> Refusal {
        Refusal::new(
            503,
            "node_not_configured",
            "The node is not fully configured.",
            format!("The deployment is missing {what}."),
            "Tell the node's operator; the README's deploy section lists every binding and secret.",
        )
    }

    /// The JSON body every refusal answers with.
    pub fn body(&self) -> RefusalBody {
        RefusalBody {
            error: RefusalDetail {
                code: self.code.to_string(),
                message: self.message.clone(),
                reason: self.reason.clone(),
                fix: self.fix.clone(),
            },
        }
    }

    /// A 404 that answers exactly as a missing object would, so an object the caller
    /// may not see is indistinguishable from one that does not exist.
    pub fn not_found(what: &str, id: &str) -> Refusal {
        Refusal::new(
            404,
            "not_found",
            format!("There is no {what} {id}."),
            format!("No {what} with that id exists, or you are not allowed to know that it does."),
            format!("Check the id; list what you can see to find the right {what}."),
        )
    }
}

impl From<RequestError> for Refusal {
    fn from(error: RequestError) -> Refusal {
        match error {
            RequestError::NoSuchRoute { method, path } => Refusal::new(
                404,
                "no_such_route",
                format!("Nothing answers {method} {path}."),
                "The node declares no route with that path.",
                "See the OpenAPI document or the Agent Skill for the routes the node offers.",
            ),
            RequestError::MethodNotAllowed { method, path, allowed } => {
                let mut refusal = Refusal::new(
                    405,
                    "method_not_allowed",
                    format!("{path} does not answer {method}."),
                    format!("The route exists but answers only {allowed}."),
                    format!("Use {allowed}."),
                );
                refusal.allow = Some(allowed);
                refusal
            }
            RequestError::BodyTooLarge { limit } => Refusal::new(
                413,
                "body_too_large",
                "The request body is too large.",
                format!("The node reads request bodies of at most {limit} bytes."),
                "Send a smaller body.",
            ),
            RequestError::BodyNotExpected => Refusal::new(
                400,
                "unexpected_body",
                "This route takes no request body.",
                "A body was sent to a route that declares none, so the node cannot tell what was meant.",
                "Send the request without a body; pass values in the path or query.",
            ),
            RequestError::MissingBody => Refusal::new(
                400,
                "missing_body",
                "This route needs a JSON request body.",
                "The request had no body.",
                "Send a JSON object as described by the route's request schema.",
            ),
            RequestError::MalformedJson { detail } => Refusal::new(
                400,
                "malformed_json",
                "The request body is not valid JSON.",
                detail,
                "Send a well-formed JSON object.",
            ),
            RequestError::InvalidBody { detail } => Refusal::new(
                400,
                "invalid_body",
                "The request body does not have the shape this route needs.",
                detail,
                "Correct the named field to match the route's request schema.",
            ),
            RequestError::UnknownQueryParameter { name, known } => Refusal::new(
                400,
                "unknown_query_parameter",
                format!("The query parameter `{name}` is not one this route takes."),
                if known.is_empty() {
                    "This route takes no query parameters.".to_string()
                } else {
                    format!("This route takes: {known}.")
                },
                "Remove it, or correct its spelling.",
            ),
            RequestError::InvalidQueryParameter { name, expected } => Refusal::new(
                400,
                "invalid_query_parameter",
                format!("The query parameter `{name}` has a value this route cannot use."),
                format!("`{name}` must be {expected}."),
                format!("Send `{name}` as {expected}, or leave it out."),
            ),
            RequestError::InvalidPathParameter { name, expected } => Refusal::new(
                404,
                "not_found",
                format!("`{name}` does not name anything here."),
                format!("`{name}` must be {expected}."),
                "Check the id; list what you can see to find the right one.",
            ),
        }
    }
}

impl From<AuthenticationError> for Refusal {
    fn from(error: AuthenticationError) -> Refusal {
        match error {
            AuthenticationError::MissingCredentials => Refusal::new(
                401,
                "not_signed_in",
                "This route needs a signed-in caller.",
                "The request carried no session and no agent credential.",
                "Sign in at POST /api/sessions and send the access token as `Authorization: Bearer <token>`, or use an agent's `mr_agt_` credential.",
            ),
            AuthenticationError::MalformedCredential => Refusal::new(
                401,
                "invalid_credential",
                "The credential in this request is not one the node issued.",
                "The bearer token or session cookie is malformed or its signature does not verify.",
                "Sign in again at POST /api/sessions to get a fresh access token.",
            ),
            AuthenticationError::AccessTokenExpired => Refusal::new(
                401,
                "access_token_expired",
                "The access token has expired.",
                "Access tokens last 15 minutes.",
                "Exchange your refresh token at POST /api/sessions/refresh for a new access token, then retry.",
            ),
            AuthenticationError::SessionEnded => Refusal::new(
                401,
                "session_ended",
                "This session no longer works.",
                "The session was signed out or revoked, or the person was disabled.",
                "Sign in again at POST /api/sessions; if your account was disabled, ask an administrator.",
            ),
            AuthenticationError::CrossOrigin => Refusal::new(
                403,
                "cross_origin_refused",
                "A request that changes something came from another origin.",
                "Changing requests sent with cookies, or carrying an Origin header, must come from the node's own origin; anything else could be a forged request.",
                "Call the node from its own pages, or use `Authorization: Bearer` without cookies.",
            ),
            AuthenticationError::WrongHost { node_origin } => Refusal::new(
                403,
                "wrong_host",
                "This node does not answer at that address.",
                format!(
                    "The node answers only at {node_origin}; a request for any other host could be a DNS rebinding attack."
                ),
                format!("Send the request to {node_origin}."),
            ),
            AuthenticationError::AgentCredentialInvalid => Refusal::new(
                401,
                "agent_credential_invalid",
                "That agent credential does not work.",
                "It is unknown, or it was replaced by pairing again.",
                "Ask an administrator for a new credential or pairing code for this agent.",
            ),
            AuthenticationError::AgentRevoked => Refusal::new(
                401,
                "agent_revoked",
                "This agent was revoked.",
                "An administrator ended this agent for good; its credential never works again.",
                "Ask an administrator to mint a new agent if the work should continue.",
            ),
            AuthenticationError::AgentPaused => Refusal::new(
                403,
                "agent_paused",
                "This agent is paused.",
                "An administrator paused it; its credential works again when it is resumed.",
                "Ask an administrator (or your sponsor) to resume the agent.",
            ),
            AuthenticationError::AgentExpired => Refusal::new(
                401,
                "agent_expired",
                "This agent's credential has expired.",
                "It was minted with an expiry, which has passed.",
                "Ask an administrator to mint a new agent.",
            ),
            AuthenticationError::SponsorDisabled => Refusal::new(
                403,
                "sponsor_disabled",
                "This agent's sponsor is disabled, so it cannot act.",
                "An agent acts under its sponsor's authority, and a disabled person has none to lend.",
                "Ask an administrator to enable the sponsor, or to mint a new agent under another sponsor.",
            ),
            AuthenticationError::CredentialNotAccepted => Refusal::new(
                403,
                "credential_not_accepted",
                "This kind of credential cannot call this route.",
                "The route answers people signed in with a session.",
                "Sign in as a person and call it with that session.",
            ),
        }
    }
}

impl From<AuthorityError> for Refusal {
    fn from(error: AuthorityError) -> Refusal {
        match error {
            AuthorityError::MissingOrganizationRelation(relation) => Refusal::new(
                403,
                "missing_relation",
                format!("This needs {} on the organisation.", relation.name()),
                format!("You do not hold {} ({}).", relation.name(), relation.description()),
                format!(
                    "Ask an administrator to grant you {} on org, or ask someone who holds it to do this.",
                    relation.name()
                ),
            ),
            AuthorityError::NotSelfOrAdministrator => Refusal::new(
                403,
                "not_self_or_administrator",
                "Only the person themself or an administrator can do this.",
                "The path names another person and you do not hold org.admin.",
                "Use your own id (see GET /api/me), or ask an administrator.",
            ),
            AuthorityError::NoSuchMailbox { mailbox_id } => Refusal::not_found("mailbox", &mailbox_id),
            AuthorityError::MissingMailboxRelations { mailbox_id, missing, any } => {
                let names: Vec<&str> = missing.iter().map(|relation| relation.name()).collect();
                let (needs, grant) = if any {
                    (format!("one of {}", names.join(", ")), format!("one of {}", names.join(", ")))
                } else {
                    (names.join(" and "), names.join(" and "))
                };
                Refusal::new(
                    403,
                    "missing_relation",
                    format!("This needs {needs} on mailbox {mailbox_id}."),
                    format!(
                        "You hold something on this mailbox, but not {needs} ({}).",
                        missing.iter().map(|relation| relation.description()).collect::<Vec<_>>().join(" / ")
                    ),
                    format!(
                        "Ask an administrator to grant you {grant} on {mailbox_id}, or ask someone who holds it to do this."
                    ),
                )
            }
            AuthorityError::OutsideCeiling { tool, never_offered_because: Some(reason) } => Refusal::new(
                403,
                "not_for_agents",
                format!("An agent cannot use {tool}."),
                reason,
                "Ask a person to do it; if your work needs it, tell your sponsor what you were trying to do.",
            ),
            AuthorityError::OutsideCeiling { tool, never_offered_because: None } => Refusal::new(
                403,
                "outside_ceiling",
                format!("This agent was not given {tool}."),
                "An agent can use only the routes pinned to it when it was minted, and nothing widens that ceiling later.",
                "Ask an administrator to mint an agent with the capability that contains this route.",
            ),
            AuthorityError::PeopleOnly => Refusal::new(
                403,
                "people_only",
                "Only a person can do this.",
                "This route acts on a person's own account, and the caller is not a person.",
                "Ask the person to do it themselves, signed in with their own session.",
            ),
        }
    }
}

impl From<WithheldTool> for Refusal {
    fn from(error: WithheldTool) -> Refusal {
        let registry = registry();
        let route = registry.route(error.route_id());
        let tier = registry.tier(route.id);
        match error {
            WithheldTool::NotForAgents(_) => AuthorityError::OutsideCeiling {
                tool: route.tool,
                never_offered_because: registry.withheld_from_agents_because(route.id),
            }
            .into(),
            WithheldTool::NeverOffered(_) => Refusal::new(
                403,
                "never_offered",
                format!("{} is not offered as a tool to anyone.", route.tool),
                registry
                    .never_offered_because(route.id)
                    .unwrap_or_else(|| "Its tier is never offered to a machine.".into()),
                if tier == Tier::Surface {
                    "Call the tools that tools/list offers; each one is a route of the node."
                } else {
                    "A person does this themselves, signed in to Mailroom's web interface; ask the person you are working for."
                },
            ),
            WithheldTool::PeopleOnly(_) => Refusal::new(
                403,
                "people_only",
                format!("{} is offered only to a signed-in person.", route.tool),
                format!(
                    "This call carried no credential, so it is offered only what an agent could be given, and no \
                     agent is ever given {}. Who may call it: {}",
                    route.tool,
                    route.authority.describe()
                ),
                "Connect with a person's access token (sign in at POST /api/sessions, then send \
                 `Authorization: Bearer <token>`) as someone who may call it.",
            ),
        }
    }
}

impl From<SetupError> for Refusal {
    fn from(error: SetupError) -> Refusal {
        match error {
            SetupError::NotConfigured => Refusal::new(
                403,
                "setup_not_configured",
                "The node cannot be set up yet.",
                "No SETUP_TOKEN secret is configured on the Worker.",
                "Run `wrangler secret put SETUP_TOKEN`, then call POST /api/setup with that token.",
            ),
            SetupError::WrongToken => Refusal::new(
                403,
                "wrong_setup_token",
                "The setup token is not the one configured on the Worker.",
                "POST /api/setup needs the SETUP_TOKEN secret exactly.",
                "Send the value you set with `wrangler secret put SETUP_TOKEN`.",
            ),
            SetupError::AlreadySetUp => Refusal::new(
                409,
                "already_set_up",
                "The node is already set up.",
                "An administrator exists, so the setup token no longer works.",
                "Sign in as an administrator at POST /api/sessions; an administrator can create other people.",
            ),
        }
    }
}

impl From<SessionError> for Refusal {
    fn from(error: SessionError) -> Refusal {
        match error {
            SessionError::WrongEmailOrPassword => Refusal::new(
                401,
                "wrong_email_or_password",
                "Those credentials do not sign anyone in.",
                "The email is unknown, the password is wrong, or the person is disabled; the node does not say which.",
                "Check the email and password. After repeated failures the node refuses for a while, so ask an administrator if you are unsure.",
            ),
            SessionError::TooManyAttempts { retry_after_seconds } => {
                let mut refusal = Refusal::new(
                    429,
                    "too_many_sign_in_attempts",
                    "Password checks are paused for this account or address.",
                    "Too many sign-ins or password changes failed recently with a wrong password, for this account or from this address.",
                    format!(
                        "Wait {} minutes and try again, or ask an administrator to reset your password.",
                        retry_after_seconds.div_ceil(60)
                    ),
                );
                refusal.retry_after_seconds = Some(retry_after_seconds);
                refusal
            }
            SessionError::MissingRefreshToken => Refusal::new(
                400,
                "missing_refresh_token",
                "No refresh token was sent.",
                "A refresh needs the refresh token, in the body or in the browser's refresh cookie.",
                "Send `{\"refresh_token\": \"…\"}` with the token from sign-in or the last refresh.",
            ),
            SessionError::RefreshTokenInvalid => Refusal::new(
                401,
                "refresh_token_invalid",
                "That refresh token does not refresh any session.",
                "It is unknown, expired, or its session was signed out or revoked.",
                "Sign in again at POST /api/sessions.",
            ),
            SessionError::RefreshTokenReused => Refusal::new(
                401,
                "refresh_token_reused",
                "That refresh token was already exchanged, so its session has been ended.",
                "A refresh token works once; presenting a retired one means a copy may have leaked, and the node ends the session to protect it.",
                "Sign in again at POST /api/sessions.",
            ),
            SessionError::RefreshRaced => Refusal::new(
                409,
                "refresh_raced",
                "This session was refreshed a moment ago by another request.",
                "Two refreshes of the same token arrived together; the other one won.",
                "Use the tokens from the other refresh (a browser already has them in its cookies) and retry.",
            ),
            SessionError::WrongCurrentPassword => Refusal::new(
                403,
                "wrong_current_password",
                "The current password is not right, so the password was not changed.",
                "Changing a password needs the one in use now.",
                "Send your current password; if you have forgotten it, ask an administrator.",
            ),
        }
    }
}

impl From<PersonError> for Refusal {
    fn from(error: PersonError) -> Refusal {
        match error {
            PersonError::InvalidEmail => Refusal::new(
                400,
                "invalid_email",
                "That is not an email address the node can use.",
                "An email address needs a local part, an @ and a domain with a dot, and no spaces, at most 254 characters.",
                "Send an address such as ana@example.com.",
            ),
            PersonError::EmailTaken => Refusal::new(
                409,
                "email_taken",
                "Someone on the node already uses that email address.",
                "An email address signs in exactly one person.",
                "Use another address, or find the existing person in GET /api/people.",
            ),
            PersonError::InvalidName => Refusal::new(
                400,
                "invalid_name",
                "That name cannot be used.",
                "A name must have 1 to 200 characters and not be only spaces.",
                "Send a display name such as \"Ana Lima\".",
            ),
            PersonError::WeakPassword { minimum } => Refusal::new(
                400,
                "weak_password",
                "That password is too short.",
                format!("Passwords need at least {minimum} characters (and at most 1024)."),
                format!("Choose a password of at least {minimum} characters; a few unrelated words work well."),
            ),
            PersonError::NoSuchPerson { id } => Refusal::not_found("person", &id),
            PersonError::CannotDisableSelf => Refusal::new(
                409,
                "cannot_disable_self",
                "You cannot disable your own account.",
                "Disabling yourself would end your own session and could leave the node without an administrator.",
                "Ask another administrator to do it.",
            ),
            PersonError::LastAdministrator => last_administrator(),
        }
    }
}

impl From<TeamError> for Refusal {
    fn from(error: TeamError) -> Refusal {
        match error {
            TeamError::InvalidName => Refusal::new(
                400,
                "invalid_team_name",
                "That team name cannot be used.",
                "A team name must have 1 to 100 characters and not be only spaces.",
                "Send a name such as \"Support\".",
            ),
            TeamError::NameTaken => Refusal::new(
                409,
                "team_name_taken",
                "A team with that name already exists.",
                "Team names are unique on the node.",
                "Choose another name, or use the existing team from GET /api/teams.",
            ),
            TeamError::NoSuchTeam { id } => Refusal::not_found("team", &id),
            TeamError::NoSuchPerson { id } => Refusal::not_found("person", &id),
            TeamError::LastAdministrator => last_administrator(),
        }
    }
}

impl From<RelationError> for Refusal {
    fn from(error: RelationError) -> Refusal {
        match error {
            RelationError::UnknownRelation { name } => Refusal::new(
                400,
                "unknown_relation",
                format!("`{name}` is not a relation."),
                "Relations are a fixed vocabulary.",
                format!("Use one of {}.", relation_names(|_| true)),
            ),
            RelationError::InvalidSubject { subject } => Refusal::new(
                400,
                "invalid_subject",
                format!("`{subject}` cannot hold a relation."),
                "A subject is a person (`usr_…`), an agent (`agt_…`) or every member of a team (`tm_…#member`).",
                "Send the id of a person or an agent, or a team id followed by #member.",
            ),
            RelationError::WrongObject { relation, expected } => Refusal::new(
                400,
                "wrong_object_for_relation",
                format!("{relation} is not held on that object."),
                format!("{relation} is held on {expected}."),
                format!("Send {expected} as the object."),
            ),
            RelationError::NoSuchSubject { subject } => Refusal::new(
                404,
                "not_found",
                format!("There is no {subject}."),
                "The subject names a person, agent or team that does not exist.",
                "Check the id in GET /api/people or GET /api/teams.",
            ),
            RelationError::NoSuchObject { object } => Refusal::new(
                404,
                "not_found",
                format!("There is no {object}."),
                "The object names a mailbox that does not exist.",
                "Check the mailbox id.",
            ),
            RelationError::NotHeld => Refusal::new(
                404,
                "not_found",
                "That subject does not hold that relation on that object.",
                "There is no such tuple to revoke.",
                "List the subject's relations with GET /api/relations?subject=… to see what it holds.",
            ),
            RelationError::LastAdministrator => last_administrator(),
            RelationError::AgentsHoldOnlyMailboxRelations { relation } => Refusal::new(
                400,
                "agents_hold_only_mailbox_relations",
                format!("An agent cannot hold {relation}."),
                "Agents hold mailbox relations only; organisation relations (administration, exports) stay with people.",
                "Grant the agent a mailbox relation, or ask a person who holds the organisation relation to act.",
            ),
            RelationError::SponsorLacks { relation, object } => sponsor_lacks(&relation, &object),
        }
    }
}

impl From<AuditError> for Refusal {
    fn from(error: AuditError) -> Refusal {
        match error {
            AuditError::Request(request) => request.into(),
        }
    }
}

impl From<MailboxError> for Refusal {
    fn from(error: MailboxError) -> Refusal {
        match error {
            MailboxError::InvalidAddress => Refusal::new(
                400,
                "invalid_address",
                "That is not an address mail can be delivered to.",
                "A mailbox address needs a local part, an @ and a domain with a dot, and no spaces.",
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

impl From<MessageError> for Refusal {
    fn from(error: MessageError) -> Refusal {
        match error {
            MessageError::NoSuchMessage { id } => Refusal::not_found("message", &id),
            MessageError::NoSuchAttachment { index } => Refusal::new(
                404,
                "not_found",
                format!("This message has no attachment {index}."),
                "Attachments are numbered from 0, in the order get_message lists them.",
                "Use an `index` from the message's `attachments`.",
            ),
        }
    }
}

impl From<SearchError> for Refusal {
    fn from(error: SearchError) -> Refusal {
        let (code, message, reason) = match error {
            SearchError::EmptyQuery => {
                ("empty_query", "There is nothing to search for.", "`q` is missing, or has no letters or digits in it.")
            }
            SearchError::UnclosedQuote => (
                "unclosed_quote",
                "The search has a quote that is never closed.",
                "A \" starts a phrase, and another \" must end it.",
            ),
            SearchError::QueryTooLong => {
                ("query_too_long", "The search is too long.", "A search has at most 16 terms and 500 characters.")
            }
        };
        Refusal::new(
            400,
            code,
            message,
            reason,
            "Search for words, such as `q=invoice march`, a prefix with *, or a \"quoted phrase\".",
        )
    }
}

impl From<SendError> for Refusal {
    fn from(error: SendError) -> Refusal {
        match error {
            SendError::NoSuchSend { id } => Refusal::not_found("send", &id),
            SendError::NoSuchReplyTarget { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no message {id} to reply to in this mailbox."),
                "A reply must answer a message this mailbox received and that you can see.",
                "Use a message id from list_messages for this mailbox, or leave `reply_to` out.",
            ),
            SendError::InvalidRecipient { address } => Refusal::new(
                400,
                "invalid_recipient",
                format!("`{address}` is not an address mail can be sent to."),
                "Each recipient is one plain address, without a display name or angle brackets.",
                "Send addresses such as ana@example.com, one per list entry.",
            ),
            SendError::RecipientCount => Refusal::new(
                400,
                "recipient_count",
                "A send needs at least one To recipient, and at most 50 recipients in all.",
                "Mail without a recipient goes nowhere; very wide sends are not what a shared mailbox is for.",
                "Name between 1 and 50 recipients across `to` and `cc`.",
            ),
            SendError::InvalidSubject => Refusal::new(
                400,
                "invalid_subject",
                "That subject cannot be sent.",
                "A subject is one line of 1 to 998 characters, with no line breaks.",
                "Send a single-line subject.",
            ),
            SendError::TextTooLong => Refusal::new(
                400,
                "text_too_long",
                "The message text is too long.",
                "A send's text may have at most 256 KiB.",
                "Shorten the text.",
            ),
            SendError::WrongState { state, needs } => Refusal::new(
                409,
                "wrong_state",
                format!("This send is {}, and this needs it to be {}.", state.as_str(), needs.as_str()),
                match needs {
                    SendState::Draft => "Only a draft can be edited, deleted or submitted.",
                    SendState::Failed => {
                        "Only a send whose dispatch failed can be sent again; a dispatched one has reached everyone, and one still sealed is being handed over."
                    }
                    _ => "Only a submitted send can be cancelled, approved or refused.",
                },
                "Get the send to see its state; cancel a submission to edit it again.",
            ),
            SendError::NotAsApproved { id } => Refusal::new(
                409,
                "not_as_approved",
                format!("Send {id} cannot be sent again as it was approved."),
                "What leaves is rebuilt from the stored send, and the stored send no longer hashes to the manifest recorded when it was sealed (or was sealed before the node kept the sender it was sealed with).",
                "Do not send it: verify the audit chain (GET /api/audit/verify), then draft it again for a new approval.",
            ),
            SendError::NotYours => Refusal::new(
                403,
                "not_yours",
                "Only the person or agent who wrote this draft, or submitted it, can do that.",
                "Drafts and submissions are their author's until a second person decides.",
                "Ask the author, or draft your own.",
            ),
            SendError::OwnSubmission => Refusal::new(
                403,
                "own_submission",
                "You submitted this send, so you cannot be the one to decide on it.",
                "Dual control needs a second person: the submitter never approves their own send.",
                "Ask another person who holds approval.decide on this mailbox to approve or refuse it; to change it yourself, cancel the submission.",
            ),
            SendError::AgentsCannotDecide => Refusal::new(
                403,
                "agents_cannot_decide",
                "An agent cannot approve or refuse a send.",
                "An agent acts under its sponsor's authority, so it can never be the second person dual control needs.",
                "Ask a person who holds approval.decide on this mailbox to decide.",
            ),
            SendError::AuthorLostAuthority { author } => Refusal::new(
                409,
                "author_lost_authority",
                "This send cannot be sealed: its author no longer holds send.propose on the mailbox.",
                format!(
                    "{author} lost send.propose after submitting; a send is sealed only while its author may still propose it."
                ),
                "Refuse it, or ask an administrator to grant send.propose to the author again.",
            ),
            SendError::InvalidReason => Refusal::new(
                400,
                "invalid_reason",
                "A refusal needs a reason.",
                "The reason tells the submitter why; it has 1 to 1,000 characters.",
                "Send `{\"reason\": \"…\"}`.",
            ),
            SendError::Raced => Refusal::new(
                409,
                "raced",
                "Someone else changed this send a moment ago.",
                "Another request edited, submitted or decided it between your read and your change.",
                "Get the send again and decide from its current state.",
            ),
        }
    }
}

impl From<AgentError> for Refusal {
    fn from(error: AgentError) -> Refusal {
        match error {
            AgentError::InvalidName => Refusal::new(
                400,
                "invalid_agent_name",
                "That agent name cannot be used.",
                "An agent's name has 1 to 100 characters.",
                "Name it for its work, such as \"Invoice triage\".",
            ),
            AgentError::NoSuchAgent { id } => Refusal::not_found("agent", &id),
            AgentError::NoSuchSponsor { id } => Refusal::not_found("person", &id),
            AgentError::SponsorDisabled => Refusal::new(
                409,
                "sponsor_disabled",
                "A disabled person cannot sponsor an agent.",
                "An agent acts under its sponsor's authority, and a disabled person has none to lend.",
                "Choose an enabled sponsor, or enable this person first.",
            ),
            AgentError::NoCapabilities => Refusal::new(
                400,
                "no_capabilities",
                "An agent needs at least one capability.",
                "Capabilities are what an agent may do; with none it could do nothing.",
                "Choose capabilities from GET /api/agent-capabilities.",
            ),
            AgentError::UnknownCapability { name } => Refusal::new(
                400,
                "unknown_capability",
                format!("`{name}` is not a capability."),
                "Capabilities are a fixed vocabulary.",
                "Choose from GET /api/agent-capabilities.",
            ),
            AgentError::NoSuchMailbox { id } => Refusal::not_found("mailbox", &id),
            AgentError::DuplicateMailbox { id } => Refusal::new(
                400,
                "duplicate_mailbox",
                format!("Mailbox {id} is named twice."),
                "Each mailbox takes one list of relations.",
                "Merge the two entries into one.",
            ),
            AgentError::NotAMailboxRelation { relation } => Refusal::new(
                400,
                "not_a_mailbox_relation",
                format!("`{relation}` cannot be granted on a mailbox."),
                "An agent holds only mailbox relations; organisation relations are never given to agents.",
                format!("Use one of {}.", relation_names(|kind| kind == ObjectKind::Mailbox)),
            ),
            AgentError::SponsorLacks { relation, mailbox } => sponsor_lacks(&relation, &mailbox),
            AgentError::CapabilityUnsatisfiable { capability, requires } => Refusal::new(
                400,
                "capability_unsatisfiable",
                format!("No chosen mailbox lets {capability} work."),
                format!("{capability} needs {} together on one mailbox.", requires.join(" and ")),
                format!("Grant {} on at least one mailbox, or leave {capability} out.", requires.join(" and ")),
            ),
            AgentError::InvalidExpiry => Refusal::new(
                400,
                "invalid_expiry",
                "That expiry cannot be used.",
                "`expires_at` must be an RFC 3339 time in the future, such as 2027-01-31T00:00:00Z.",
                "Send a future time, or leave it out for no expiry.",
            ),
            AgentError::Revoked => Refusal::new(
                409,
                "agent_revoked",
                "This agent was revoked.",
                "A revoked agent stays revoked; nothing can pause, resume or pair it.",
                "Mint a new agent.",
            ),
            AgentError::PairingCodeInvalid => Refusal::new(
                401,
                "pairing_code_invalid",
                "That pairing code does not pair anything.",
                "It is unknown, was already used, has expired (codes last 10 minutes), or its agent was revoked.",
                "Ask an administrator for a new pairing code.",
            ),
            AgentError::TooManyPairingAttempts { retry_after_seconds } => {
                let mut refusal = Refusal::new(
                    429,
                    "too_many_pairing_attempts",
                    "Pairing is paused for this address.",
                    "Too many pairing codes failed from this address recently.",
                    format!("Wait {} minutes and try again with the right code.", retry_after_seconds.div_ceil(60)),
                );
                refusal.retry_after_seconds = Some(retry_after_seconds);
                refusal
            }
        }
    }
}

fn last_administrator() -> Refusal {
    Refusal::new(
        409,
        "last_administrator",
        "This would leave the node without an administrator.",
        "At least one enabled person must hold org.admin, or nobody could manage the node.",
        "Grant org.admin to another person first, then try again.",
    )
}

/// An agent asked to hold what its sponsor does not, at minting or by a later grant.
fn sponsor_lacks(relation: &str, object: &str) -> Refusal {
    Refusal::new(
        403,
        "sponsor_lacks_relation",
        format!("The sponsor does not hold {relation} on {object}."),
        "An agent can never hold more than its sponsor: it acts under the sponsor's authority.",
        "Leave that relation out, choose a sponsor who holds it, or grant it to the sponsor first.",
    )
}

/// The names of the relations held on objects of the kinds `held_on` accepts, from
/// the vocabulary itself.
fn relation_names(held_on: impl Fn(ObjectKind) -> bool) -> String {
    let names: Vec<&str> = Relation::ALL
        .iter()
        .filter(|relation| held_on(relation.object_kind()))
        .map(|relation| relation.name())
        .collect();
    names.join(", ")
}
