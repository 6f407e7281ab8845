//! What the steps of a mailbox's move share: the sizes of their pages, the
//! mailbox's database with its round trips counted in the job's, a row's key
//! and canonical content, and a table's tally.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::core::background::{Background, BackgroundError};
use crate::core::storage::{Counted, QueryResult, Row, Statement, StorageError, Value};
use crate::mail::store::moving::{MovedTable, Position};

/// The most rows a page reads.
pub const ROWS_PER_PAGE: i64 = 200;
/// The rows the first page of a table in a call reads, before the size of its
/// rows is known: a receipt's text may be 256 KB, so a first page of
/// `ROWS_PER_PAGE` could read tens of megabytes only to send one of them.
pub const FIRST_PAGE_ROWS: i64 = 16;
/// The most bytes of rows (as JSON) a page sends to the mailbox's database:
/// one parameter, under a Durable Object's 2 MB for a string, with room for
/// a row of up to its own 2 MB alone (a page always carries one row).
pub const PAGE_BYTES: usize = 1_000_000;

/// The mailbox's database, its round trips counted in the job's.
pub(super) struct Mailbox<'a, 'node> {
    pub(super) work: &'a Background<'node>,
    pub(super) database: Counted<'a>,
}

impl Mailbox<'_, '_> {
    pub(super) async fn execute_all(&self, statements: Vec<Statement>) -> Result<Vec<QueryResult>, BackgroundError> {
        self.work.count_elsewhere(1);
        Ok(self.database.execute(statements).await?)
    }

    pub(super) async fn execute<const N: usize>(
        &self,
        statements: Vec<Statement>,
    ) -> Result<[QueryResult; N], BackgroundError> {
        let results = self.execute_all(statements).await?;
        results
            .try_into()
            .map_err(|_| BackgroundError::Unreadable("a batch answered the wrong number of results".into()))
    }
}

pub(super) fn only(results: Vec<QueryResult>) -> Result<QueryResult, StorageError> {
    results.into_iter().next().ok_or_else(|| StorageError::Backend("a read answered no result".into()))
}

pub(super) fn read_positions(result: &QueryResult) -> Result<BTreeMap<String, Position>, StorageError> {
    let mut positions = BTreeMap::new();
    for row in &result.rows {
        let position = Position {
            last_key: row.optional_text("last_key")?,
            rows: row.integer("rows")?,
            finished: row.flag("finished")?,
        };
        positions.insert(row.text("table_name")?, position);
    }
    Ok(positions)
}

pub(super) fn bindable(value: &Json) -> Result<Value, StorageError> {
    match value {
        Json::String(text) => Ok(Value::Text(text.clone())),
        Json::Number(number) => {
            number.as_i64().map(Value::Integer).ok_or_else(|| StorageError::Decode(format!("a key of {number}")))
        }
        other => Err(StorageError::Decode(format!("a key cannot be {other}"))),
    }
}

/// How many rows fit `PAGE_BYTES` when `rows` rows took `bytes`, within
/// `ROWS_PER_PAGE`.
pub(super) fn rows_that_fit(bytes: usize, rows: usize) -> i64 {
    let average = (bytes / rows.max(1)).max(1);
    i64::try_from(PAGE_BYTES / average).unwrap_or(ROWS_PER_PAGE).clamp(1, ROWS_PER_PAGE)
}

/// `row`'s key in `table`, as JSON text.
pub(super) fn key_of(table: &MovedTable, row: &Row) -> Result<String, StorageError> {
    let values: Vec<Json> = table
        .key_columns()
        .iter()
        .map(|column| {
            row.0
                .get(*column)
                .filter(|value| !value.is_null())
                .cloned()
                .ok_or_else(|| StorageError::Decode(format!("a row of {} has no {column}", table.name)))
        })
        .collect::<Result<_, _>>()?;
    serde_json::to_string(&values).map_err(|error| StorageError::Decode(error.to_string()))
}

/// A column name the copy may spell into its statement as it is.
pub(super) fn is_identifier(name: &str) -> bool {
    let mut characters = name.chars();
    characters.next().is_some_and(|first| first.is_ascii_lowercase() || first == '_')
        && characters.all(|character| character.is_ascii_lowercase() || character.is_ascii_digit() || character == '_')
}

/// A table's count and content hash on one side of the move.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct TableTally {
    pub table: String,
    pub rows: u64,
    /// SHA-256, chained row by row in key order over each row's canonical
    /// content (every column, and the rowid of a rowid table), hex.
    pub sha256: String,
}

/// A row's canonical content: its columns sorted by name, a whole number as
/// an integer however the database's driver typed it.
pub(super) fn canonical(row: &Row) -> Result<String, StorageError> {
    let sorted: BTreeMap<&String, Json> = row.0.iter().map(|(column, value)| (column, whole(value))).collect();
    serde_json::to_string(&sorted).map_err(|error| StorageError::Decode(error.to_string()))
}

pub(super) fn whole(value: &Json) -> Json {
    match value.as_f64() {
        Some(real) if value.is_f64() && real.fract() == 0.0 && real.abs() < 9_007_199_254_740_992.0 => {
            Json::from(real as i64)
        }
        _ => value.clone(),
    }
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::Map;

    use super::*;

    #[test]
    fn a_row_is_canonical_whatever_its_columns_order_or_its_numbers_type() {
        let one = Row(Map::from_iter([("b".to_string(), Json::from(2.0)), ("a".to_string(), Json::from("x"))]));
        let other = Row(Map::from_iter([("a".to_string(), Json::from("x")), ("b".to_string(), Json::from(2))]));
        assert_eq!(canonical(&one).unwrap(), canonical(&other).unwrap());
        assert_eq!(canonical(&other).unwrap(), r#"{"a":"x","b":2}"#);
        let real = Row(Map::from_iter([("b".to_string(), Json::from(2.5))]));
        assert_eq!(canonical(&real).unwrap(), r#"{"b":2.5}"#);
    }

    #[test]
    fn only_plain_names_are_spelt_into_a_statement() {
        for name in ["rowid", "text_body", "_x1"] {
            assert!(is_identifier(name), "{name}");
        }
        for name in ["", "1a", "a-b", "a b", "a'", "A", "a\"b"] {
            assert!(!is_identifier(name), "{name}");
        }
    }
}
