//! The one storage trait the core talks to, and the plain data that crosses it.
//!
//! A `Database` runs a list of statements as one round trip, atomically: on D1 a
//! `batch`, on native SQLite a transaction. Everything the core knows about storage
//! is in this file; the D1 adapter and the test SQLite adapter implement it and
//! nothing else. Counting round trips happens here too, because the budget is a
//! property of the core's behaviour, not of either backend.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::de::DeserializeOwned;
use serde_json::Value as Json;

/// A future that need not be `Send`: Workers run one isolate per thread.
pub type LocalBoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// A value bound to a statement parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
}

impl From<&str> for Value {
    fn from(text: &str) -> Value {
        Value::Text(text.to_string())
    }
}

impl From<String> for Value {
    fn from(text: String) -> Value {
        Value::Text(text)
    }
}

impl From<&String> for Value {
    fn from(text: &String) -> Value {
        Value::Text(text.clone())
    }
}

impl From<i64> for Value {
    fn from(integer: i64) -> Value {
        Value::Integer(integer)
    }
}

impl From<u32> for Value {
    fn from(integer: u32) -> Value {
        Value::Integer(i64::from(integer))
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(optional: Option<T>) -> Value {
        optional.map_or(Value::Null, Into::into)
    }
}

/// One SQL statement with its parameters, bound positionally (`?1`, `?2`, …).
#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    pub sql: Cow<'static, str>,
    pub parameters: Vec<Value>,
}

impl Statement {
    pub fn new(sql: impl Into<Cow<'static, str>>) -> Statement {
        Statement { sql: sql.into(), parameters: Vec::new() }
    }

    pub fn bind(mut self, value: impl Into<Value>) -> Statement {
        self.parameters.push(value.into());
        self
    }

    /// A write guard: inserts into `write_guards` only when `condition` (an SQL
    /// expression with its parameters) does not hold, and the CHECK on column
    /// `slot_<slot>` refuses that row, so the transaction fails naming the slot.
    /// The slot tells the unit of work which of a call's guards refused.
    pub fn write_guard(slot: usize, condition: Statement) -> Statement {
        Statement {
            sql: format!("INSERT INTO write_guards (slot_{slot}) SELECT 1 WHERE NOT ({})", condition.sql).into(),
            parameters: condition.parameters,
        }
    }
}

/// An `INSERT` whose columns are each named once, beside the value bound to
/// them: a store builds a row this way instead of a column list and a
/// positional bind list that must be kept in step by hand. The columns it names
/// can be read back (`columns`), so a test can hold a row to its table.
#[derive(Clone, Debug, PartialEq)]
pub struct Insert {
    table: &'static str,
    verb: &'static str,
    columns: Vec<&'static str>,
    values: Vec<String>,
    parameters: Vec<Value>,
    tail: &'static str,
}

impl Insert {
    /// `INSERT INTO table`.
    pub fn into(table: &'static str) -> Insert {
        Insert { table, verb: "INSERT INTO", columns: Vec::new(), values: Vec::new(), parameters: Vec::new(), tail: "" }
    }

    /// `INSERT OR IGNORE INTO table`: a row already there (by a unique key) wins.
    pub fn or_ignore_into(table: &'static str) -> Insert {
        Insert { verb: "INSERT OR IGNORE INTO", ..Insert::into(table) }
    }

    /// `column` gets `value`.
    pub fn value(self, column: &'static str, value: impl Into<Value>) -> Insert {
        self.computed(column, "{}", value)
    }

    /// `column` gets an SQL expression of `value`: each `{}` in `expression`
    /// stands for the value's parameter, as in
    /// `"MAX({}, (SELECT MAX(at) FROM log))"`.
    pub fn computed(mut self, column: &'static str, expression: &'static str, value: impl Into<Value>) -> Insert {
        self.parameters.push(value.into());
        self.values.push(expression.replace("{}", &format!("?{}", self.parameters.len())));
        self.columns.push(column);
        self
    }

    /// What follows the values: an `ON CONFLICT …` clause or a `RETURNING` list.
    pub fn then(mut self, tail: &'static str) -> Insert {
        self.tail = tail;
        self
    }

    pub fn table(&self) -> &'static str {
        self.table
    }

    /// The columns this row sets, in the order they were named.
    pub fn columns(&self) -> &[&'static str] {
        &self.columns
    }

    pub fn statement(self) -> Statement {
        let mut sql =
            format!("{} {} ({}) VALUES ({})", self.verb, self.table, self.columns.join(", "), self.values.join(", "));
        if !self.tail.is_empty() {
            sql.push(' ');
            sql.push_str(self.tail);
        }
        Statement { sql: sql.into(), parameters: self.parameters }
    }
}

impl From<Insert> for Statement {
    fn from(insert: Insert) -> Statement {
        insert.statement()
    }
}

/// One row of a result, as column name → JSON value (the shape D1 returns).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row(pub serde_json::Map<String, Json>);

impl Row {
    /// Decodes the row into a type whose fields are the row's columns.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, StorageError> {
        serde_json::from_value(Json::Object(self.0.clone())).map_err(|error| StorageError::Decode(error.to_string()))
    }

    pub fn text(&self, column: &str) -> Result<String, StorageError> {
        match self.0.get(column) {
            Some(Json::String(text)) => Ok(text.clone()),
            other => Err(StorageError::Decode(format!("column {column} is not text: {other:?}"))),
        }
    }

    pub fn optional_text(&self, column: &str) -> Result<Option<String>, StorageError> {
        match self.0.get(column) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(text)) => Ok(Some(text.clone())),
            other => Err(StorageError::Decode(format!("column {column} is not text: {other:?}"))),
        }
    }

    pub fn integer(&self, column: &str) -> Result<i64, StorageError> {
        match self.0.get(column).and_then(Json::as_i64) {
            Some(integer) => Ok(integer),
            None => Err(StorageError::Decode(format!("column {column} is not an integer"))),
        }
    }

    pub fn optional_integer(&self, column: &str) -> Result<Option<i64>, StorageError> {
        match self.0.get(column) {
            None | Some(Json::Null) => Ok(None),
            Some(value) => value
                .as_i64()
                .map(Some)
                .ok_or_else(|| StorageError::Decode(format!("column {column} is not an integer"))),
        }
    }

    /// A boolean held as SQLite's 0 or 1.
    pub fn flag(&self, column: &str) -> Result<bool, StorageError> {
        Ok(self.integer(column)? != 0)
    }
}

/// What one statement produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryResult {
    pub rows: Vec<Row>,
    /// Rows inserted, updated or deleted.
    pub changes: u64,
    /// The database's size in bytes after the statement, when the database
    /// says (D1 does, at no cost): how the node knows how full it is.
    pub size_after: Option<u64>,
}

impl QueryResult {
    pub fn first(&self) -> Option<&Row> {
        self.rows.first()
    }

    /// The boolean `column` of the first row, when there is a row and it reads as
    /// one: the answer of a `SELECT EXISTS (…) AS column`.
    pub fn first_flag(&self, column: &str) -> Option<bool> {
        self.first().and_then(|row| row.flag(column).ok())
    }

    pub fn decode_all<T: DeserializeOwned>(&self) -> Result<Vec<T>, StorageError> {
        self.rows.iter().map(Row::decode).collect()
    }
}

/// What the named CHECK of a write guard's slot begins with
/// (`write_guard_1`, ...): a batch that failed with it was refused by its
/// guard, and applied nothing.
pub const WRITE_GUARD_PREFIX: &str = "write_guard_";

/// Why a round trip failed. The text is for logs, never for a client.
#[derive(Clone, Debug, PartialEq)]
pub enum StorageError {
    /// A UNIQUE or PRIMARY KEY constraint failed, naming `table.column`.
    Unique(String),
    /// A named CHECK constraint failed, such as the write guard.
    Check(String),
    /// A trigger refused the change with `RAISE(ABORT, 'refused:<name>')`.
    Aborted(String),
    /// A row could not be decoded into the shape the core expected.
    Decode(String),
    /// Anything else the backend reported.
    Backend(String),
}

impl StorageError {
    /// Classifies a SQLite error message; D1 and native SQLite word them alike.
    pub fn from_message(message: &str) -> StorageError {
        if let Some(rest) = message.split("UNIQUE constraint failed: ").nth(1) {
            return StorageError::Unique(first_word(rest));
        }
        if let Some(rest) = message.split("CHECK constraint failed: ").nth(1) {
            return StorageError::Check(first_word(rest));
        }
        if let Some(rest) = message.split("refused:").nth(1) {
            return StorageError::Aborted(first_word(rest));
        }
        StorageError::Backend(message.to_string())
    }
}

fn first_word(text: &str) -> String {
    text.split(|c: char| c.is_whitespace() || c == ':' || c == ',').next().unwrap_or_default().to_string()
}

impl fmt::Display for StorageError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageError::Unique(what) => write!(formatter, "unique constraint failed: {what}"),
            StorageError::Check(what) => write!(formatter, "check constraint failed: {what}"),
            StorageError::Aborted(what) => write!(formatter, "a trigger refused the change: {what}"),
            StorageError::Decode(what) => write!(formatter, "could not decode a row: {what}"),
            StorageError::Backend(what) => write!(formatter, "storage backend error: {what}"),
        }
    }
}

/// The storage the core runs on.
pub trait Database {
    /// Runs `statements` in order as one round trip and one transaction: either
    /// every statement applies or none does.
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>>;
}

/// Wraps a database for one request and counts its round trips: one per
/// `execute`, whatever the number of statements in it.
pub struct Counted<'database> {
    inner: &'database dyn Database,
    round_trips: Cell<u32>,
}

impl<'database> Counted<'database> {
    pub fn new(inner: &'database dyn Database) -> Counted<'database> {
        Counted { inner, round_trips: Cell::new(0) }
    }

    pub async fn execute(&self, statements: Vec<Statement>) -> Result<Vec<QueryResult>, StorageError> {
        self.round_trips.set(self.round_trips.get() + 1);
        let expected = statements.len();
        let results = self.inner.execute(statements).await?;
        if results.len() != expected {
            return Err(StorageError::Backend(format!("asked for {expected} results and received {}", results.len())));
        }
        Ok(results)
    }

    pub fn round_trips(&self) -> u32 {
        self.round_trips.get()
    }
}

/// A counted database is a database, for code that takes one (the audit
/// sealer), so its round trips are counted too.
impl Database for Counted<'_> {
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        Box::pin(Counted::execute(self, statements))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_insert_names_each_column_beside_its_value() {
        let insert = Insert::into("receipts")
            .value("id", "rcp_1")
            .computed("received_at", "MAX({}, COALESCE((SELECT MAX(received_at) FROM receipts), {}))", 7_i64)
            .value("subject", Option::<String>::None)
            .then("ON CONFLICT (id) DO NOTHING");
        assert_eq!(insert.columns(), ["id", "received_at", "subject"]);
        let statement = insert.statement();
        assert_eq!(
            statement.sql,
            "INSERT INTO receipts (id, received_at, subject) VALUES (?1, MAX(?2, COALESCE((SELECT MAX(received_at) \
             FROM receipts), ?2)), ?3) ON CONFLICT (id) DO NOTHING"
        );
        assert_eq!(statement.parameters, vec![Value::from("rcp_1"), Value::Integer(7), Value::Null]);
        let ignored = Insert::or_ignore_into("marks").value("a", 1_i64).statement();
        assert_eq!(ignored.sql, "INSERT OR IGNORE INTO marks (a) VALUES (?1)");
    }

    #[test]
    fn constraint_failures_are_classified_by_table_and_column() {
        assert_eq!(
            StorageError::from_message("D1_ERROR: UNIQUE constraint failed: audit_entries.seq: SQLITE_CONSTRAINT"),
            StorageError::Unique("audit_entries.seq".into())
        );
        assert_eq!(
            StorageError::from_message("UNIQUE constraint failed: people.email"),
            StorageError::Unique("people.email".into())
        );
        assert_eq!(
            StorageError::from_message("CHECK constraint failed: write_guard_failed"),
            StorageError::Check("write_guard_failed".into())
        );
        assert_eq!(
            StorageError::from_message("D1_ERROR: refused:sealed_send_is_immutable: SQLITE_CONSTRAINT"),
            StorageError::Aborted("sealed_send_is_immutable".into())
        );
        assert!(matches!(StorageError::from_message("no such table: x"), StorageError::Backend(_)));
    }
}
