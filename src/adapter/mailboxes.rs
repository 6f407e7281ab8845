//! Each mailbox's database on Cloudflare (decision 0040): a SQLite-backed
//! Durable Object per mailbox, named by the mailbox's id, and the `Database`
//! the Worker reaches it through.
//!
//! A batch crosses as JSON (`core::mailbox_storage::WireBatch`): one request
//! to the object, so one round trip, whose statements the object runs in one
//! `transactionSync`, so a failing write guard or constraint rolls back all of
//! them, as a D1 batch does. Before its first batch after a start, the object
//! applies the migrations of `migrations/mailbox/` it has not recorded, in
//! that same transaction. The object decides nothing: only the Worker reaches
//! it (a binding, never a URL), after the Worker has checked who may do what.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Reflect};
use serde_json::{Map, Value as Json};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use worker::{
    DurableObject, Env, Method, ObjectNamespace, Request, RequestInit, Response, SqlStorage, State, durable_object,
};

use crate::core::mailbox_storage::{
    APPLIED_MIGRATIONS, MailboxStorage, RECORD_MIGRATION, SCHEMA_TABLE, WAS_CREATED, WireAnswer, WireBatch, WireResult,
    WireStatement, pending_migrations,
};
use crate::core::storage::{Database, LocalBoxFuture, QueryResult, StorageError, Value};

/// The Durable Object namespace the mailboxes' databases are in (`wrangler.toml`).
pub(super) const MAILBOXES: &str = "MAILBOXES";
/// The path a batch is posted to.
const BATCH_PATH: &str = "/batch";

/// The mailboxes' objects, as the core's `MailboxStorage`.
pub struct MailboxObjects {
    namespace: ObjectNamespace,
}

impl MailboxObjects {
    pub fn new(namespace: ObjectNamespace) -> MailboxObjects {
        MailboxObjects { namespace }
    }
}

impl MailboxStorage for MailboxObjects {
    fn of(&self, mailbox_id: &str) -> Rc<dyn Database> {
        Rc::new(MailboxDatabase {
            stub: self.namespace.get_by_name(mailbox_id).map_err(|error| error.to_string()),
            only_if_created: false,
        })
    }

    fn if_created(&self, mailbox_id: &str) -> Rc<dyn Database> {
        Rc::new(MailboxDatabase {
            stub: self.namespace.get_by_name(mailbox_id).map_err(|error| error.to_string()),
            only_if_created: true,
        })
    }

    fn moved_at(&self, address: &str) -> Option<String> {
        MOVED_AT.with(|moved| moved.borrow().get(address).cloned())
    }

    fn remember_moved(&self, address: &str, mailbox_id: &str) {
        MOVED_AT.with(|moved| {
            let mut moved = moved.borrow_mut();
            // Bounded: an isolate that has seen more forgets them all, and
            // learns again from D1.
            if moved.len() >= MOVED_REMEMBERED {
                moved.clear();
            }
            moved.insert(address.to_string(), mailbox_id.to_string());
        });
    }
}

/// How many addresses of mailboxes whose mail moved an isolate remembers.
const MOVED_REMEMBERED: usize = 10_000;

thread_local! {
    /// The isolate's memory of which addresses' mailboxes keep their mail in
    /// their own databases (`MailboxStorage::moved_at`): true once learnt, so
    /// kept across the requests and messages the isolate handles.
    static MOVED_AT: std::cell::RefCell<std::collections::HashMap<String, String>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// One mailbox's object, as a `Database`.
struct MailboxDatabase {
    /// The object's stub, or why the namespace gave none.
    stub: Result<worker::Stub, String>,
    /// Its batches run only if the object's database was created before.
    only_if_created: bool,
}

impl Database for MailboxDatabase {
    fn execute(
        &self,
        statements: Vec<crate::core::storage::Statement>,
    ) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        Box::pin(async move {
            let backend = |error: &dyn std::fmt::Display| StorageError::Backend(error.to_string());
            let stub = self.stub.as_ref().map_err(|error| backend(error))?;
            let batch =
                if self.only_if_created { WireBatch::if_created(&statements) } else { WireBatch::of(&statements) };
            let body = serde_json::to_string(&batch).map_err(|error| backend(&error))?;
            let mut init = RequestInit::new();
            init.with_method(Method::Post).with_body(Some(JsValue::from_str(&body)));
            let request = Request::new_with_init(&format!("https://mailbox{BATCH_PATH}"), &init)
                .map_err(|error| backend(&error))?;
            let mut response = stub.fetch_with_request(request).await.map_err(|error| backend(&error))?;
            let text = response.text().await.map_err(|error| backend(&error))?;
            if response.status_code() != 200 {
                return Err(StorageError::Backend(format!(
                    "the mailbox's object answered {}: {text}",
                    response.status_code()
                )));
            }
            serde_json::from_str::<WireAnswer>(&text).map_err(|error| backend(&error))?.into_results()
        })
    }
}

/// A mailbox's database: its SQLite, and whether this instance has applied
/// the migrations yet.
#[durable_object]
pub struct MailboxObject {
    state: State,
    migrated: Cell<bool>,
}

impl DurableObject for MailboxObject {
    fn new(state: State, _env: Env) -> MailboxObject {
        MailboxObject { state, migrated: Cell::new(false) }
    }

    async fn fetch(&self, mut request: Request) -> worker::Result<Response> {
        if request.method() != Method::Post || request.path() != BATCH_PATH {
            return Response::error("a mailbox's object is reached only by the Worker, with a batch", 404);
        }
        let text = request.text().await?;
        let Ok(batch) = serde_json::from_str::<WireBatch>(&text) else {
            return Response::error("the batch is not one", 400);
        };
        // From here to the answer nothing awaits: the migrations and the batch
        // run as one synchronous transaction, so no other request interleaves.
        let answer = self.run(batch);
        Response::from_json(&answer)
    }
}

impl MailboxObject {
    fn run(&self, batch: WireBatch) -> WireAnswer {
        let storage = self.state.storage();
        let sql = storage.sql();
        let migrate = !self.migrated.get();
        // A read asked before the Worker's checks passed never makes a
        // database: an object whose database was never created keeps none.
        if migrate && batch.only_if_created && !was_created(&sql) {
            return WireAnswer::NeverCreated;
        }
        let within = sql.clone();
        let outcome = in_transaction(storage.as_raw().as_ref(), move || {
            if migrate {
                apply_migrations(&within)?;
            }
            batch.statements.iter().map(|statement| run_statement(&within, statement)).collect()
        });
        match outcome {
            Ok(results) => {
                self.migrated.set(true);
                WireAnswer::Committed { results, size: sql.database_size() as u64 }
            }
            Err(message) => WireAnswer::RolledBack { message },
        }
    }
}

/// Whether this object's database was ever created: its first batch records
/// the migrations it applied, so an object that has no record has no database.
fn was_created(sql: &SqlStorage) -> bool {
    sql.exec(WAS_CREATED, None)
        .and_then(|cursor| cursor.to_array::<serde_json::Value>())
        .is_ok_and(|rows| !rows.is_empty())
}

/// Applies the migrations this database has not recorded, recording each.
fn apply_migrations(sql: &SqlStorage) -> Result<(), String> {
    sql.exec(SCHEMA_TABLE, None).map_err(|error| error.to_string())?;
    let applied: Vec<Map<String, Json>> =
        sql.exec(APPLIED_MIGRATIONS, None).and_then(|cursor| cursor.to_array()).map_err(|error| error.to_string())?;
    let applied: Vec<String> =
        applied.iter().filter_map(|row| row.get("name").and_then(Json::as_str).map(str::to_string)).collect();
    for migration in pending_migrations(&applied) {
        sql.exec(migration.sql, None).map_err(|error| format!("{}: {error}", migration.name))?;
        sql.exec_raw(RECORD_MIGRATION, vec![JsValue::from_str(migration.name), JsValue::from_f64(js_sys::Date::now())])
            .map_err(|error| error.to_string())?;
    }
    Ok(())
}

/// One statement: its rows, and the rows it changed as SQLite counts them
/// (`changes()`, what D1 reports as `meta.changes`).
fn run_statement(sql: &SqlStorage, statement: &WireStatement) -> Result<WireResult, String> {
    let parameters: Vec<JsValue> = statement
        .values()
        .map_err(|error| error.to_string())?
        .iter()
        .map(|value| match value {
            Value::Null => JsValue::NULL,
            // Numbers cross as JavaScript numbers, as to D1: exact to 2^53,
            // which every integer the node stores is within.
            Value::Integer(integer) => JsValue::from_f64(*integer as f64),
            Value::Real(real) => JsValue::from_f64(*real),
            Value::Text(text) => JsValue::from_str(text),
        })
        .collect();
    // The statement's own numbering (`?1`, `?2`) is SQLite's, as on D1.
    let rows: Vec<Map<String, Json>> = sql
        .exec_raw(&statement.sql, parameters)
        .and_then(|cursor| cursor.to_array())
        .map_err(|error| error.to_string())?;
    let changes: Vec<Map<String, Json>> = sql
        .exec("SELECT changes() AS changes", None)
        .and_then(|cursor| cursor.to_array())
        .map_err(|error| error.to_string())?;
    let changes = changes.first().and_then(|row| row.get("changes")).and_then(Json::as_u64).unwrap_or(0);
    Ok(WireResult { rows, changes })
}

/// Runs `work` in the storage's `transactionSync`: what it wrote commits
/// when it answers `Ok`, and rolls back when it answers `Err` (thrown to the
/// runtime, which rolls back and throws it again). The `worker` crate does not
/// bind `transactionSync`, so it is called by name.
fn in_transaction<T: 'static>(
    storage: &JsValue,
    work: impl FnOnce() -> Result<T, String> + 'static,
) -> Result<T, String> {
    let transaction_sync = Reflect::get(storage, &JsValue::from_str("transactionSync"))
        .ok()
        .and_then(|function| function.dyn_into::<Function>().ok())
        .ok_or_else(|| "this object's storage has no transactionSync (is it SQLite-backed?)".to_string())?;
    let outcome: Rc<RefCell<Option<Result<T, String>>>> = Rc::default();
    let answered = Rc::clone(&outcome);
    let mut work = Some(work);
    let callback = Closure::<dyn FnMut() -> Result<JsValue, JsValue>>::new(move || {
        let result = work.take().map_or_else(|| Err("the transaction ran twice".to_string()), |work| work());
        let failed = result.as_ref().err().map(|message| JsValue::from_str(message));
        *answered.borrow_mut() = Some(result);
        failed.map_or(Ok(JsValue::UNDEFINED), Err)
    });
    let called = transaction_sync.call1(storage, callback.as_ref().unchecked_ref());
    drop(callback);
    let result = outcome.borrow_mut().take();
    match (called, result) {
        (_, Some(Err(message))) => Err(message),
        (Ok(_), Some(Ok(value))) => Ok(value),
        (Err(thrown), _) => Err(thrown.as_string().unwrap_or_else(|| format!("{thrown:?}"))),
        (Ok(_), None) => Err("the transaction never ran".to_string()),
    }
}
