//! The audit note: whom a call is recorded under, what it acted on, and what
//! else its entry should say.
//!
//! The caller starts as the credential claims and changes only through named
//! steps: a credential check proving (or failing to prove) an agent, and a
//! handler that has just proved who is calling (signing in, refreshing, pairing).
//! Nothing else can set whom an entry names.

use mailroom_contract::PathParameter;

use crate::core::caller::{AgentProof, Caller};
use crate::core::context::ports::{Attribution, AuditRecord};
use crate::core::context::request::RequestView;
use crate::core::events::{Topic, topic_of_call};
use crate::core::http::Response;
use crate::core::refusal::Refusal;

/// What a call's audit entry will say.
pub struct AuditNote {
    /// Whether the route's calls are recorded at all.
    audited: bool,
    /// Who the request claims to be; confirmed by the first read.
    caller: Caller,
    /// For an agent, its sponsor, as its liveness check found it: the delegator
    /// its acts are recorded under, refused ones included.
    delegator: Option<String>,
    /// An agent credential whose secret did not match (or whose agent does not
    /// exist) proves nothing: the call is attributed to nobody and not recorded,
    /// so a forged credential cannot write an entry naming a real agent.
    credential_unproven: bool,
    object: Option<String>,
    detail: Option<serde_json::Value>,
    /// Where the change is told, when the route's declaration cannot say (a
    /// message to an agent is told in that agent's inbox).
    topic: Option<Topic>,
}

impl AuditNote {
    pub(super) fn new(caller: Caller, audited: bool) -> AuditNote {
        AuditNote {
            audited,
            caller,
            delegator: None,
            credential_unproven: false,
            object: None,
            detail: None,
            topic: None,
        }
    }

    pub fn audited(&self) -> bool {
        self.audited
    }

    /// Takes this call out of the chain: it changed nothing (see
    /// `Context::leave_unrecorded`).
    pub(super) fn leave_unrecorded(&mut self) {
        self.audited = false;
    }

    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    pub fn delegator(&self) -> Option<&str> {
        self.delegator.as_deref()
    }

    /// Takes in what a credential check proved.
    pub(super) fn prove(&mut self, attribution: Attribution) {
        match attribution {
            Attribution::ActingFor(sponsor) => {
                self.delegator = Some(sponsor);
                self.credential_unproven = false;
            }
            Attribution::OnItsOwn => {
                self.delegator = None;
                self.credential_unproven = false;
            }
            Attribution::Unproven => {
                self.delegator = None;
                self.credential_unproven = true;
            }
        }
    }

    /// The call has just proved it is this person's session (a sign-in, a refresh).
    pub(super) fn attribute_to_person(&mut self, person_id: String, session_id: String) {
        self.caller = Caller::Person { person_id, session_id };
        self.delegator = None;
        self.credential_unproven = false;
    }

    /// The call has just proved it is this agent's, acting for `sponsor` (a
    /// pairing code redeemed for its credential).
    pub(super) fn attribute_to_agent(&mut self, agent_id: String, proof: AgentProof, sponsor: String) {
        self.caller = Caller::Agent { agent_id, proof };
        self.delegator = Some(sponsor);
        self.credential_unproven = false;
    }

    pub(super) fn object(&mut self, object: String) {
        self.object = Some(object);
    }

    pub(super) fn detail(&mut self, detail: serde_json::Value) {
        self.detail = Some(detail);
    }

    pub(super) fn topic(&mut self, topic: Topic) {
        self.topic = Some(topic);
    }

    /// Whether the call names who made it: a credential the node issued, or a
    /// public route's handler that proved who is calling.
    pub(super) fn attributed(&self) -> bool {
        self.caller.actor_id().is_some() && !self.credential_unproven
    }

    /// Whether the call can be attributed: a public route, or a caller who named
    /// themself with a credential the node issued (a person's signed token; an
    /// agent's credential once its secret matched).
    pub(super) fn identified(&self, public_route: bool) -> bool {
        public_route || (self.caller.actor_id().is_some() && !self.credential_unproven)
    }

    /// The entry for this call with `outcome`.
    pub(super) fn record(&self, outcome: &Result<Response, Refusal>, view: &RequestView<'_>) -> AuditRecord {
        let (outcome_name, detail) = match outcome {
            Ok(_) => ("ok", self.detail.clone()),
            Err(refusal) => {
                let mut detail = serde_json::json!({ "code": refusal.code, "status": refusal.status });
                if let (Some(extra), Some(map)) = (&self.detail, detail.as_object_mut()) {
                    map.insert("attempted".into(), extra.clone());
                }
                ("refused", Some(detail))
            }
        };
        let object = self.object.clone().or_else(|| view.first_path_value().map(str::to_string));
        // The caller's own data is a person's: an agent's is its sponsor's.
        let own_person = match &self.caller {
            Caller::Person { person_id, .. } => Some(person_id.as_str()),
            _ => self.delegator.as_deref(),
        };
        AuditRecord {
            at: view.now_ms(),
            actor: self.caller.actor_id().map(str::to_string),
            delegator: self.delegator.clone(),
            surface: Some(view.surface().as_str()),
            action: view.route().tool.to_string(),
            object,
            outcome: outcome_name,
            detail: detail.map(|detail| detail.to_string()),
            topic: self
                .topic
                .clone()
                .or_else(|| topic_of_call(view.route(), view.path(PathParameter::MailboxId), own_person)),
        }
    }
}
