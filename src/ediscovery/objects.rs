//! Where an export's objects are kept in the object store: the routes that
//! serve them and the run that copies them name them alike.

/// The object id of an export's manifest.
pub(super) const MANIFEST: &str = "manifest";

/// Where an export's objects are kept in the object store.
pub(super) fn object_key(export_id: &str, object_id: &str) -> String {
    if object_id == MANIFEST {
        format!("exports/{export_id}/manifest.json")
    } else {
        format!("exports/{export_id}/{object_id}.eml")
    }
}
