//! `Refuses`: a refusal a route's own handler gives, with the words that say
//! when, and the status it is answered with.

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
