//! `Tier`, what a machine may do with a route, and `Exposure`, how a route's
//! tier is known: derived for a read, or written down by hand.

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
