//! The `Database` trait on D1: every `execute` is one `batch`, so one round trip
//! and one transaction, whatever the number of statements.

use wasm_bindgen::JsValue;
use worker::D1Database;

use crate::core::storage::{Database, LocalBoxFuture, QueryResult, Row, Statement, StorageError, Value};

pub struct D1Storage {
    database: D1Database,
}

impl D1Storage {
    pub fn new(database: D1Database) -> D1Storage {
        D1Storage { database }
    }
}

fn bound(value: &Value) -> JsValue {
    match value {
        Value::Null => JsValue::NULL,
        // D1 takes numbers as JavaScript numbers: exact to 2^53, which every
        // integer the node stores (times in milliseconds, counts, seqs) is within.
        Value::Integer(integer) => JsValue::from_f64(*integer as f64),
        Value::Real(real) => JsValue::from_f64(*real),
        Value::Text(text) => JsValue::from_str(text),
    }
}

fn storage_error(error: worker::Error) -> StorageError {
    StorageError::from_message(&error.to_string())
}

impl Database for D1Storage {
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        Box::pin(async move {
            let mut prepared = Vec::with_capacity(statements.len());
            for statement in &statements {
                let parameters: Vec<JsValue> = statement.parameters.iter().map(bound).collect();
                prepared.push(self.database.prepare(statement.sql.as_ref()).bind(&parameters).map_err(storage_error)?);
            }
            let results = self.database.batch(prepared).await.map_err(storage_error)?;
            let mut answers = Vec::with_capacity(results.len());
            for result in results {
                let rows: Vec<serde_json::Map<String, serde_json::Value>> = result.results().map_err(storage_error)?;
                let changes = result.meta().ok().flatten().and_then(|meta| meta.changes).unwrap_or(0) as u64;
                answers.push(QueryResult { rows: rows.into_iter().map(Row).collect(), changes });
            }
            Ok(answers)
        })
    }
}
