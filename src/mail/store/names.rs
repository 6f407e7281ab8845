//! The statement that reads the names of the people and agents a mailbox's
//! rows mention by id.

use crate::core::storage::Statement;

/// The names of the people and agents `ids` names, whatever their state now
/// (`id`, `name`); an id that names neither has no row.
pub(crate) fn names_of(ids: &[&str]) -> Statement {
    Statement::new(
        "SELECT p.id, p.name FROM people p WHERE p.id IN (SELECT value FROM json_each(?1)) \
         UNION ALL SELECT a.id, a.name FROM agents a WHERE a.id IN (SELECT value FROM json_each(?1))",
    )
    .bind(serde_json::json!(ids).to_string())
}
