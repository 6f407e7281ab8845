//! The four-part refusal every route answers with when it says no.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
