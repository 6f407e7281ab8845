//! The `Database` trait on D1: every `execute` is one `batch`, so one round trip
//! and one transaction, whatever the number of statements.

use wasm_bindgen::JsValue;
use worker::D1Database;

use crate::adapter::platform::WorkersPlatform;
use crate::core::storage::{Database, LocalBoxFuture, QueryResult, Row, Statement, StorageError, Value};
use crate::core::timing::{Phase, Timings};

pub struct D1Storage {
    database: D1Database,
    /// The request's phases: binding parameters and converting rows cross
    /// between JavaScript and WebAssembly, and are the boundary's, not storage's.
    timings: Timings,
}

impl D1Storage {
    pub fn new(database: D1Database, timings: Timings) -> D1Storage {
        D1Storage { database, timings }
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
            let platform = WorkersPlatform;
            let binding = self.timings.during(&platform, Phase::Boundary);
            let mut prepared = Vec::with_capacity(statements.len());
            for statement in &statements {
                let parameters: Vec<JsValue> = statement.parameters.iter().map(bound).collect();
                prepared.push(self.database.prepare(statement.sql.as_ref()).bind(&parameters).map_err(storage_error)?);
            }
            drop(binding);
            let results = self.database.batch(prepared).await.map_err(storage_error)?;
            let _converting = self.timings.during(&platform, Phase::Boundary);
            let mut answers = Vec::with_capacity(results.len());
            for result in results {
                let rows: Vec<serde_json::Map<String, serde_json::Value>> = result.results().map_err(storage_error)?;
                let meta = result.meta().ok().flatten();
                let changes = meta.as_ref().and_then(|meta| meta.changes).unwrap_or(0) as u64;
                let size_after = meta.as_ref().and_then(|meta| meta.size_after).map(|size| size as u64);
                answers.push(QueryResult { rows: rows.into_iter().map(Row).collect(), changes, size_after });
            }
            Ok(answers)
        })
    }
}
