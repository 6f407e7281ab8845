//! Why an export call was refused, and how each refusal reads.

use mailroom_contract::api::export_limits;

use crate::core::refusal::Refusal;

/// Why an export call was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExportError {
    NoSuchExport {
        id: String,
    },
    NoSuchObject {
        id: String,
    },
    /// A message the export selected was deleted before it could be copied.
    ObjectMissing {
        id: String,
    },
    /// The object is not copied yet, or the manifest not yet written.
    NotReady {
        id: String,
    },
    TooManyMessages {
        selected: i64,
    },
    TooManyBuilding,
}

impl From<ExportError> for Refusal {
    fn from(error: ExportError) -> Refusal {
        match error {
            ExportError::NoSuchExport { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no export {id} of yours."),
                "An export is read only by the person who requested it.",
                "List your exports with list_exports and use an id from there.",
            ),
            ExportError::NoSuchObject { id } => Refusal::new(
                404,
                "not_found",
                format!("The export holds no object {id}."),
                "An export holds its manifest and the messages it selected.",
                "List its objects with list_export_objects and use an id from there.",
            ),
            ExportError::ObjectMissing { id } => Refusal::new(
                404,
                "not_found",
                format!("{id} was deleted before the export could copy it."),
                "The manifest lists it as selected but not copied.",
                "Read the manifest for what was selected; nothing else of it remains.",
            ),
            ExportError::NotReady { id } => Refusal::new(
                404,
                "not_found",
                format!("{id} is not copied yet."),
                "The export is still building, a run of the per-minute schedule at a time; its manifest is written last.",
                "Follow get_export until its state is `ready`, then download it.",
            ),
            ExportError::TooManyMessages { selected } => Refusal::new(
                400,
                "invalid_body",
                format!("The request selects {selected} messages."),
                format!("One export holds at most {} messages.", export_limits::MESSAGES),
                "Narrow it with `since` and `until`, or with `query`, and request the rest as another export.",
            ),
            ExportError::TooManyBuilding => Refusal::new(
                409,
                "conflict",
                "You already have as many exports building as one may at once.".to_string(),
                format!("At most {} of one person's exports build at a time.", export_limits::BUILDING_PER_REQUESTER),
                "Wait for one to be ready (get_export), or delete one, then ask again.",
            ),
        }
    }
}
