//! The refusals identity's files share: what people, teams and relations each
//! refuse on their own stays beside them.

use crate::core::refusal::Refusal;

/// The refusal of any change that would leave the node without an enabled
/// administrator: disabling one, removing one from a team, revoking org.admin.
pub(super) fn last_administrator() -> Refusal {
    Refusal::new(
        409,
        "last_administrator",
        "This would leave the node without an administrator.",
        "At least one enabled person must hold org.admin, or nobody could manage the node.",
        "Grant org.admin to another person first, then try again.",
    )
}
