//! `SqliteDatabase`: the `Database` a test node stores in, SQLite in memory
//! migrated from the same `migrations/` as D1, which counts its own round trips
//! and what each statement cost, and lets a test read, snapshot or tamper with
//! rows outside the core.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

use rusqlite::types::ValueRef;
use serde_json::Value as Json;

use crate::core::mailbox_storage::{MailboxStorage, SPANS_STORES, WireAnswer, WireBatch, WireResult};
use crate::core::node::AuditKey;
use crate::core::storage::{Database, Insert, LocalBoxFuture, QueryResult, Row, Statement, StorageError, Value};

use super::stores::{TablesNamed, compiles_in_a_mailbox, migrate_as_a_mailbox, names_mail};

/// SQLite in memory, migrated from `migrations/`.
pub struct SqliteDatabase {
    connection: RefCell<rusqlite::Connection>,
    /// Batches executed so far: round trips, counted by the storage itself rather
    /// than reported by the code under test.
    batches: Cell<u32>,
    /// What each statement executed so far cost SQLite, in order.
    costs: RefCell<Vec<StatementCost>>,
    /// The size every statement reports the database to be after it, as D1
    /// reports its own (`QueryResult::size_after`): none unless a test
    /// pretends (`pretend_size`), since an in-memory database's is no D1's.
    pretended_size: Cell<Option<u64>>,
    /// The tables the statement being compiled names, told by SQLite.
    named: TablesNamed,
}

/// What one statement cost SQLite, counted by SQLite itself: the work a query
/// does, whatever the machine's speed.
#[derive(Clone, Debug)]
pub struct StatementCost {
    pub sql: String,
    /// Steps of SQLite's virtual machine: grows with every row a query visits.
    pub steps: i32,
    /// Sorts the query needed (an ORDER BY no index serves).
    pub sorts: i32,
}

impl SqliteDatabase {
    /// A fresh database with every migration applied, in file-name order, as
    /// `wrangler d1 migrations apply` does.
    pub fn migrated() -> SqliteDatabase {
        // `~` sorts after every migration's name, which starts with its number.
        SqliteDatabase::migrated_before("~")
    }

    /// A fresh database with the migrations whose file names sort before
    /// `first_not_applied` applied, to store rows as they were before it: then
    /// `migrate_from` applies the rest, as a deployment would.
    pub fn migrated_before(first_not_applied: &str) -> SqliteDatabase {
        let database = SqliteDatabase::empty();
        database.apply_migrations(|name| name < first_not_applied);
        database
    }

    /// A mailbox's database as its object builds it on its first batch: the
    /// schema table, then every migration of `MAILBOX_MIGRATIONS` (the Worker's
    /// own copy of `migrations/mailbox/`) it records as not yet applied.
    pub fn for_a_mailbox() -> SqliteDatabase {
        let database = SqliteDatabase::empty();
        migrate_as_a_mailbox(&database.connection.borrow());
        database
    }

    /// An empty database in memory, enforcing foreign keys as D1 and Durable
    /// Objects' SQLite do.
    fn empty() -> SqliteDatabase {
        let mut connection = rusqlite::Connection::open_in_memory().expect("in-memory SQLite opens");
        connection.execute_batch("PRAGMA foreign_keys = ON;").expect("foreign keys on");
        let named = TablesNamed::default();
        named.install(&mut connection);
        SqliteDatabase {
            connection: RefCell::new(connection),
            batches: Cell::new(0),
            costs: RefCell::default(),
            pretended_size: Cell::new(None),
            named,
        }
    }

    /// Applies the migrations from `first` on, in file-name order.
    pub fn migrate_from(&self, first: &str) {
        self.apply_migrations(|name| name >= first);
    }

    fn apply_migrations(&self, which: impl Fn(&str) -> bool) {
        let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let mut files: Vec<_> = std::fs::read_dir(&directory)
            .expect("migrations/ exists")
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|extension| extension == "sql"))
            .filter(|path| path.file_name().and_then(|name| name.to_str()).is_some_and(&which))
            .collect();
        files.sort();
        for file in files {
            let sql = std::fs::read_to_string(&file).expect("migration is readable");
            self.connection.borrow().execute_batch(&sql).unwrap_or_else(|error| panic!("{}: {error}", file.display()));
        }
    }

    /// Runs `sql` (one or more statements) outside any request, as a test that
    /// stores rows directly does.
    pub fn execute_sql(&self, sql: &str) {
        self.connection.borrow().execute_batch(sql).expect("the test's SQL runs");
    }

    /// How many batches (round trips) have been executed so far.
    pub fn batches(&self) -> u32 {
        self.batches.get()
    }

    /// What the statements executed since the last call cost, in order.
    pub fn take_costs(&self) -> Vec<StatementCost> {
        self.costs.take()
    }

    /// Runs raw SQL outside the core, for a test that must tamper with storage
    /// as one who can write the database would: D1's refusal of writes to a
    /// moved mailbox's mail (migration 0035) is the node's own rule, so every
    /// mailbox is named as emptying around it.
    pub fn tamper(&self, sql: &str) {
        let connection = self.connection.borrow();
        let d1 = connection
            .query_row("SELECT count(*) FROM sqlite_schema WHERE name = 'mail_changes'", [], |row| row.get::<_, i64>(0))
            .unwrap_or(0)
            > 0;
        let sql = if d1 {
            format!(
                "BEGIN; INSERT INTO mail_emptying (mailbox_id) SELECT id FROM mailboxes; {sql}; \
                 DELETE FROM mail_emptying; COMMIT;"
            )
        } else {
            sql.to_string()
        };
        connection.execute_batch(&sql).expect("tampering SQL runs");
    }

    /// Every row of every table, as text, table by table: what a test compares
    /// before and after a call that must change nothing.
    pub fn snapshot(&self) -> Vec<(String, Vec<String>)> {
        let connection = self.connection.borrow();
        let mut tables: Vec<String> = connection
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .and_then(|mut statement| statement.query_map([], |row| row.get(0))?.collect())
            .expect("the schema reads");
        tables.retain(|name| !name.starts_with("sqlite_"));
        tables
            .into_iter()
            .map(|table| {
                let mut statement = connection.prepare(&format!("SELECT * FROM \"{table}\"")).expect("a table reads");
                let columns = statement.column_count();
                let rows = statement
                    .query_map([], |row| {
                        let values: Vec<String> = (0..columns)
                            .map(|index| format!("{:?}", row.get_ref(index).map(|value| value.to_owned())))
                            .collect();
                        Ok(values.join("|"))
                    })
                    .and_then(|rows| rows.collect::<Result<Vec<String>, _>>())
                    .expect("rows read");
                (table, rows)
            })
            .collect()
    }

    /// The first column of the first row `sql` answers, as text, read outside
    /// the core: what a test looks up without a route for it.
    pub fn peek(&self, sql: &str) -> Option<String> {
        self.connection.borrow().query_row(sql, [], |row| row.get::<_, Option<String>>(0)).ok().flatten()
    }

    /// The unkeyed SHA-256 link an entry had before the chain was keyed, computed
    /// from the stored row after `prev_hash`, as anyone who can read the database
    /// can: what a test rewriting history without the key writes. Written here
    /// apart from the chain's own code, so it also checks that format.
    pub fn legacy_hash(&self, seq: i64, prev_hash: &str) -> String {
        use sha2::Digest;
        let connection = self.connection.borrow();
        let entry: serde_json::Map<String, Json> = connection
            .query_row(
                "SELECT seq, at, actor, actor_kind, delegator, surface, action, object, outcome, detail                  FROM audit_entries WHERE seq = ?1",
                [seq],
                |row| {
                    let mut fields = serde_json::Map::new();
                    fields.insert("seq".into(), Json::from(row.get::<_, i64>(0)?));
                    fields.insert("at".into(), Json::from(row.get::<_, i64>(1)?));
                    fields.insert("actor_kind".into(), Json::from(row.get::<_, String>(3)?));
                    fields.insert("action".into(), Json::from(row.get::<_, String>(6)?));
                    fields.insert("outcome".into(), Json::from(row.get::<_, String>(8)?));
                    for (index, name) in [(2, "actor"), (4, "delegator"), (5, "surface"), (7, "object"), (9, "detail")] {
                        if let Some(value) = row.get::<_, Option<String>>(index)? {
                            fields.insert(name.into(), Json::from(value));
                        }
                    }
                    Ok(fields)
                },
            )
            .expect("the entry exists");
        // serde_json's map keeps keys sorted: the canonical form.
        let canonical = serde_json::to_string(&entry).expect("JSON serialises");
        let mut hasher = sha2::Sha256::new();
        hasher.update(b"mailroom.audit-chain.v1\n");
        hasher.update(prev_hash.as_bytes());
        hasher.update(canonical.as_bytes());
        hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
    }

    /// Rewrites every entry as a node wrote it before nonces (migration 0024):
    /// no nonce, no MAC version, its MAC over its own fields alone under `key`
    /// (`mailroom.audit-entry.v2`), and unsealed, for the sealer to link as it
    /// did then. Computed here apart from the chain's own code, so it also
    /// checks that format.
    pub fn as_written_before_nonces(&self, key: &AuditKey) {
        use hmac::{KeyInit, Mac};
        let entries: Vec<(i64, String)> = {
            let connection = self.connection.borrow();
            let mut statement = connection
                .prepare(
                    "SELECT seq, at, actor, actor_kind, delegator, surface, action, object, outcome, detail \
                     FROM audit_entries ORDER BY seq",
                )
                .expect("the entries read");
            statement
                .query_map([], |row| {
                    let mut fields = serde_json::Map::new();
                    fields.insert("at".into(), Json::from(row.get::<_, i64>(1)?));
                    fields.insert("actor_kind".into(), Json::from(row.get::<_, String>(3)?));
                    fields.insert("action".into(), Json::from(row.get::<_, String>(6)?));
                    fields.insert("outcome".into(), Json::from(row.get::<_, String>(8)?));
                    for (index, name) in [(2, "actor"), (4, "delegator"), (5, "surface"), (7, "object"), (9, "detail")]
                    {
                        if let Some(value) = row.get::<_, Option<String>>(index)? {
                            fields.insert(name.into(), Json::from(value));
                        }
                    }
                    fields.insert("key_id".into(), Json::from(key.id.clone()));
                    // serde_json's map keeps keys sorted: the canonical form.
                    Ok((row.get::<_, i64>(0)?, serde_json::to_string(&fields).expect("JSON serialises")))
                })
                .and_then(|rows| rows.collect::<Result<_, _>>())
                .expect("the entries read")
        };
        for (seq, canonical) in entries {
            let mut mac = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&key.secret).expect("any key length");
            mac.update(b"mailroom.audit-entry.v2\n");
            mac.update(canonical.as_bytes());
            let mac: String = mac.finalize().into_bytes().iter().map(|byte| format!("{byte:02x}")).collect();
            self.tamper(&format!(
                "UPDATE audit_entries SET key_id = '{}', mac = '{mac}', mac_version = NULL, nonce = NULL, \
                 prev_hash = NULL, hash = NULL WHERE seq = {seq}",
                key.id
            ));
        }
    }

    /// Runs raw SQL outside the core and answers what SQLite said, for a test
    /// that requires the schema itself to refuse a change.
    pub fn try_tamper(&self, sql: &str) -> Result<(), String> {
        self.connection.borrow().execute_batch(sql).map_err(|error| error.to_string())
    }

    /// The columns of `table`, in order.
    pub fn column_names(&self, table: &str) -> Vec<String> {
        let connection = self.connection.borrow();
        let mut statement = connection.prepare(&format!("PRAGMA table_info({table})")).expect("table_info runs");
        statement
            .query_map([], |row| row.get::<_, String>(1))
            .expect("table_info answers")
            .collect::<Result<_, _>>()
            .expect("column names read")
    }

    /// The columns of `row`'s table that `row` does not name, sorted: what a
    /// store's test holds a row it writes whole to, so a column added to the
    /// table is either written or named as left to its default. Fails the test
    /// when the row names a column twice, or one its table does not have.
    pub fn columns_not_named(&self, row: &Insert) -> Vec<String> {
        let in_the_table = self.column_names(row.table());
        for (index, column) in row.columns().iter().enumerate() {
            assert!(in_the_table.iter().any(|own| own == column), "{} has no column {column}", row.table());
            assert!(!row.columns()[..index].contains(column), "{column} is named twice");
        }
        let mut not_named: Vec<String> =
            in_the_table.into_iter().filter(|column| !row.columns().contains(&column.as_str())).collect();
        not_named.sort_unstable();
        not_named
    }

    /// The database's size in bytes: what a test pretends, or SQLite's own
    /// count of its pages.
    pub fn size(&self) -> u64 {
        self.pretended_size.get().unwrap_or_else(|| {
            let connection = self.connection.borrow();
            let pages: i64 = connection.query_row("PRAGMA page_count", [], |row| row.get(0)).unwrap_or(0);
            let page_size: i64 = connection.query_row("PRAGMA page_size", [], |row| row.get(0)).unwrap_or(0);
            u64::try_from(pages * page_size).unwrap_or(0)
        })
    }

    /// Makes every statement from now on report the database's size as
    /// `bytes` (None: report none), for tests of a nearly full database.
    pub fn pretend_size(&self, bytes: Option<u64>) {
        self.pretended_size.set(bytes);
    }

    /// Every row `sql` answers, each column as text (NULL as empty), read
    /// outside the core.
    pub fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        let connection = self.connection.borrow();
        let mut statement = connection.prepare(sql).expect("the test's query compiles");
        let columns = statement.column_count();
        statement
            .query_map([], |row| {
                (0..columns)
                    .map(|index| {
                        Ok(match row.get_ref(index)? {
                            ValueRef::Null => String::new(),
                            ValueRef::Integer(integer) => integer.to_string(),
                            ValueRef::Real(real) => real.to_string(),
                            ValueRef::Text(text) | ValueRef::Blob(text) => String::from_utf8_lossy(text).into_owned(),
                        })
                    })
                    .collect::<Result<Vec<String>, rusqlite::Error>>()
            })
            .and_then(|rows| rows.collect())
            .expect("the test's query runs")
    }

    /// Whether every statement of `sql` compiles here: every table and
    /// column it names is in this database.
    pub fn compiles(&self, sql: &str) -> bool {
        use rusqlite::fallible_iterator::FallibleIterator;
        let connection = self.connection.borrow();
        rusqlite::Batch::new(&connection, sql).count().is_ok()
    }

    /// A single integer from raw SQL, for assertions about storage.
    pub fn count(&self, sql: &str) -> i64 {
        self.connection.borrow().query_row(sql, [], |row| row.get(0)).expect("count query runs")
    }

    fn run(&self, connection: &rusqlite::Connection, statement: &Statement) -> Result<QueryResult, StorageError> {
        let error = |error: rusqlite::Error| StorageError::from_message(&error.to_string());
        self.named.forget();
        let mut prepared = connection.prepare(&statement.sql).map_err(error)?;
        let marked = statement.sql.contains(SPANS_STORES);
        if names_mail(&self.named.taken()) || marked {
            match (compiles_in_a_mailbox(&statement.sql), marked) {
                (Err(refused), false) => panic!(
                    "a statement names mail and cannot run in a mailbox's database ({refused}), so no one store \
                     could answer it (decision 0040): {}",
                    statement.sql
                ),
                (Ok(()), true) => panic!(
                    "a statement is marked as spanning D1 and a mailbox but runs in a mailbox's database as it is: \
                     drop its mark: {}",
                    statement.sql
                ),
                _ => {}
            }
        }
        let columns: Vec<String> = prepared.column_names().map(str::to_string).collect();
        let parameters: Vec<rusqlite::types::Value> = statement
            .parameters
            .iter()
            .map(|value| match value {
                Value::Null => rusqlite::types::Value::Null,
                Value::Integer(integer) => rusqlite::types::Value::Integer(*integer),
                Value::Real(real) => rusqlite::types::Value::Real(*real),
                Value::Text(text) => rusqlite::types::Value::Text(text.clone()),
            })
            .collect();
        let mut rows = prepared.query(rusqlite::params_from_iter(parameters)).map_err(error)?;
        let mut result = QueryResult::default();
        while let Some(row) = rows.next().map_err(error)? {
            let mut map = serde_json::Map::new();
            for (index, column) in columns.iter().enumerate() {
                let value = match row.get_ref(index).map_err(error)? {
                    ValueRef::Null => Json::Null,
                    ValueRef::Integer(integer) => Json::from(integer),
                    ValueRef::Real(real) => Json::from(real),
                    ValueRef::Text(text) => Json::from(String::from_utf8_lossy(text).into_owned()),
                    ValueRef::Blob(_) => {
                        return Err(StorageError::Decode("blobs are not used".into()));
                    }
                };
                map.insert(column.clone(), value);
            }
            result.rows.push(Row(map));
        }
        drop(rows);
        result.changes = connection.changes();
        result.size_after = self.pretended_size.get();
        self.costs.borrow_mut().push(StatementCost {
            sql: statement.sql.to_string(),
            steps: prepared.get_status(rusqlite::StatementStatus::VmStep),
            sorts: prepared.get_status(rusqlite::StatementStatus::Sort),
        });
        Ok(result)
    }
}

impl Database for SqliteDatabase {
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        Box::pin(async move {
            self.batches.set(self.batches.get() + 1);
            let mut connection = self.connection.borrow_mut();
            let transaction = connection.transaction().map_err(|error| StorageError::Backend(error.to_string()))?;
            let mut results = Vec::with_capacity(statements.len());
            for statement in &statements {
                // Dropping the transaction on error rolls it back, as D1 does a batch.
                results.push(self.run(&transaction, statement)?);
            }
            transaction.commit().map_err(|error| StorageError::Backend(error.to_string()))?;
            Ok(results)
        })
    }
}

/// Each mailbox's database natively: SQLite in memory per mailbox, made on
/// first use, reached through the same form of batch and answer as a
/// mailbox's object (`WireBatch`, `WireAnswer`), so a value or a result that
/// form cannot carry fails here as it would on Cloudflare.
#[derive(Default)]
pub struct SqliteMailboxes {
    mailboxes: RefCell<BTreeMap<String, Rc<SqliteMailbox>>>,
    /// What the Worker's isolate would remember of moved mailboxes' addresses.
    moved_at: RefCell<BTreeMap<String, String>>,
}

impl SqliteMailboxes {
    /// The database of `mailbox_id`, for a test that reads or tampers with it
    /// outside the core; `None` before the mailbox's first batch.
    pub fn database(&self, mailbox_id: &str) -> Option<Rc<SqliteMailbox>> {
        self.mailboxes.borrow().get(mailbox_id).cloned()
    }

    /// The mailboxes that have a database so far, in id order.
    pub fn ids(&self) -> Vec<String> {
        self.mailboxes.borrow().keys().cloned().collect()
    }

    /// Batches (round trips) run so far in every mailbox's database together.
    pub fn batches(&self) -> u32 {
        self.mailboxes.borrow().values().map(|mailbox| mailbox.database.batches()).sum()
    }
}

impl MailboxStorage for SqliteMailboxes {
    fn of(&self, mailbox_id: &str) -> Rc<dyn Database> {
        let mut mailboxes = self.mailboxes.borrow_mut();
        let mailbox = mailboxes
            .entry(mailbox_id.to_string())
            .or_insert_with(|| Rc::new(SqliteMailbox { database: SqliteDatabase::for_a_mailbox() }));
        Rc::clone(mailbox) as Rc<dyn Database>
    }

    fn if_created(&self, mailbox_id: &str) -> Rc<dyn Database> {
        match self.database(mailbox_id) {
            Some(mailbox) => mailbox as Rc<dyn Database>,
            None => Rc::new(NeverCreated),
        }
    }

    fn moved_at(&self, address: &str) -> Option<String> {
        self.moved_at.borrow().get(address).cloned()
    }

    fn remember_moved(&self, address: &str, mailbox_id: &str) {
        self.moved_at.borrow_mut().insert(address.to_string(), mailbox_id.to_string());
    }
}

/// A mailbox whose database was never created, asked to read only if it
/// was: as its object, it answers every batch `NeverCreated` and creates
/// nothing.
struct NeverCreated;

impl Database for NeverCreated {
    fn execute(&self, _statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        Box::pin(async { WireAnswer::NeverCreated.into_results() })
    }
}

/// One mailbox's database natively.
pub struct SqliteMailbox {
    pub database: SqliteDatabase,
}

impl SqliteMailbox {
    /// What the mailbox's object does with a batch: its statements in one
    /// transaction, answered in the wire's form.
    async fn serve(&self, batch: WireBatch) -> WireAnswer {
        let outcome = match batch.into_statements() {
            Ok(statements) => self.database.execute(statements).await,
            Err(error) => Err(error),
        };
        match outcome {
            Ok(results) => WireAnswer::Committed {
                results: results
                    .into_iter()
                    .map(|result| WireResult {
                        rows: result.rows.into_iter().map(|row| row.0).collect(),
                        changes: result.changes,
                    })
                    .collect(),
                size: self.database.size(),
            },
            Err(error) => WireAnswer::RolledBack { message: sqlite_message(&error) },
        }
    }
}

impl Database for SqliteMailbox {
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        Box::pin(async move {
            // Both ways through JSON text, as between the Worker and the object.
            let wire = |error: serde_json::Error| StorageError::Backend(error.to_string());
            let sent = serde_json::to_string(&WireBatch::of(&statements)).map_err(wire)?;
            let answer = self.serve(serde_json::from_str(&sent).map_err(wire)?).await;
            let answered = serde_json::to_string(&answer).map_err(wire)?;
            serde_json::from_str::<WireAnswer>(&answered).map_err(wire)?.into_results()
        })
    }
}

/// An error as SQLite words it, which `StorageError::from_message` reads back
/// as the same error: what the object answers a rolled-back batch with.
fn sqlite_message(error: &StorageError) -> String {
    match error {
        StorageError::Unique(what) => format!("UNIQUE constraint failed: {what}"),
        StorageError::Check(what) => format!("CHECK constraint failed: {what}"),
        StorageError::Aborted(what) => format!("refused:{what}"),
        StorageError::Decode(what) | StorageError::Backend(what) => what.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_columns_not_named_are_the_tables_others_sorted() {
        let database = SqliteDatabase::migrated();
        assert_eq!(database.columns_not_named(&Insert::into("teams").value("name", "Support")), ["created_at", "id"]);
        assert_eq!(database.columns_not_named(&Insert::into("teams").value("id", "tm_1")), ["created_at", "name"]);
    }

    #[test]
    #[should_panic(expected = "teams has no column colour")]
    fn a_row_naming_a_column_its_table_lacks_fails() {
        SqliteDatabase::migrated().columns_not_named(&Insert::into("teams").value("colour", "red"));
    }

    #[test]
    #[should_panic(expected = "name is named twice")]
    fn a_row_naming_a_column_twice_fails() {
        SqliteDatabase::migrated().columns_not_named(&Insert::into("teams").value("name", "a").value("name", "b"));
    }
}
