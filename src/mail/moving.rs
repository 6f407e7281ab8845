//! A mailbox's mail moved out of D1 into the mailbox's own database (decision
//! 0040, issue 30): copied a page at a time (`move_mail`) and then verified
//! table by table, by count and content hash, on both sides (`verify_move`),
//! the verification recorded in the organisation's audit chain, in the batch
//! that points the mailbox's reads at its own database. The tables,
//! the keys they are paged by and the SQL are `store::moving`'s.
//!
//! The move keeps its position in the mailbox's database, never in D1: each
//! page is written there in one batch with its search index rows and the
//! position it reached, behind a guard that the recorded position is exactly
//! where the page starts. So a call can stop anywhere, the next resumes from
//! what the object holds, and a page sent twice (a retry after a lost answer)
//! rolls back whole instead of indexing its receipts twice. Rowids are copied
//! as they are, so storage order and the search indexes' rowids carry over.
//! Nothing is deleted from D1 here: emptying it comes with the switch.
//!
//! A verification that passes also moves the mailbox's reads: from then on
//! `location` reads its mail from its own database. Its writes do not follow
//! yet (mail keeps arriving in D1, and a row written there after the move
//! would be read by nothing), so nothing schedules this: the switch that sends
//! a mailbox's writes to its database is what may run it, once per mailbox,
//! while that mailbox's mail is not changing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use sha2::{Digest, Sha256};

use super::store::mailboxes;
use super::store::moving::{self as store, Position, Whose};
use crate::core::background::{Background, BackgroundError};
use crate::core::context::ports::AuditRecord;
use crate::core::storage::{Counted, QueryResult, Row, Statement, StorageError, Value};

pub use super::store::moving::{Key, MOVED_TABLES, MovedTable, NOT_MOVED, Owner, SEARCH_INDEXES};

/// The action of the organisation's entry recording a verified move, its
/// object the mailbox, its detail each table's count and hash.
pub const MOVE_ACTION: &str = "move_mailbox_mail";
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

/// What one call of `move_mail` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MoveProgress {
    /// Pages written into the mailbox's database.
    pub pages: u32,
    /// Rows copied.
    pub rows: u64,
    /// Round trips made, to D1 and to the mailbox's database.
    pub round_trips: u32,
    /// Every table is copied whole.
    pub finished: bool,
}

/// Copies the next pages of mailbox `mailbox_id`'s mail from D1 into its own
/// database, in `MOVED_TABLES` order, making at most `round_trips` round trips
/// (each page costs two: its read from D1, its write in the mailbox's
/// database; the call's first reads the positions). Resumes from the
/// positions the mailbox's database holds; once every table is copied, a call
/// reads them, finds nothing to do and answers `finished`.
pub async fn move_mail(
    work: &Background<'_>,
    mailbox_id: &str,
    round_trips: u32,
) -> Result<MoveProgress, BackgroundError> {
    let database = work.node().mailboxes.of(mailbox_id);
    let mailbox = Mailbox { work, database: Counted::new(&*database) };
    let before = work.round_trips();
    let mut progress = MoveProgress::default();
    let spent = |work: &Background<'_>| work.round_trips() - before;
    let [positions] = mailbox.execute::<1>(vec![store::positions()]).await?;
    let mut positions = read_positions(&positions)?;
    for table in MOVED_TABLES {
        let mut position = positions.remove(table.name);
        let mut limit = FIRST_PAGE_ROWS;
        while !position.as_ref().is_some_and(|position| position.finished) {
            if spent(work) + 2 > round_trips {
                progress.round_trips = spent(work);
                return Ok(progress);
            }
            let after = position.as_ref().map(key_values).transpose()?;
            let read =
                work.database().execute(vec![store::page(table, Whose::Mailbox(mailbox_id), after.as_deref(), limit)]);
            let rows = only(read.await?)?.rows;
            let page = Page::cut(table, rows, limit)?;
            let next = Position {
                last_key: page
                    .last_key
                    .clone()
                    .or_else(|| position.as_ref().and_then(|position| position.last_key.clone())),
                rows: position.as_ref().map_or(0, |position| position.rows) + page.rows.len() as i64,
                finished: page.reached_the_end,
            };
            mailbox.execute_all(page.statements(table, position.as_ref(), &next)?).await?;
            progress.pages += 1;
            progress.rows += page.rows.len() as u64;
            limit = page.next_limit();
            position = Some(next);
        }
    }
    progress.finished = true;
    progress.round_trips = spent(work);
    Ok(progress)
}

/// The mailbox's database, its round trips counted in the job's.
struct Mailbox<'a, 'node> {
    work: &'a Background<'node>,
    database: Counted<'a>,
}

impl Mailbox<'_, '_> {
    async fn execute_all(&self, statements: Vec<Statement>) -> Result<Vec<QueryResult>, BackgroundError> {
        self.work.count_elsewhere(1);
        Ok(self.database.execute(statements).await?)
    }

    async fn execute<const N: usize>(&self, statements: Vec<Statement>) -> Result<[QueryResult; N], BackgroundError> {
        let results = self.execute_all(statements).await?;
        results
            .try_into()
            .map_err(|_| BackgroundError::Unreadable("a batch answered the wrong number of results".into()))
    }
}

fn only(results: Vec<QueryResult>) -> Result<QueryResult, StorageError> {
    results.into_iter().next().ok_or_else(|| StorageError::Backend("a read answered no result".into()))
}

fn read_positions(result: &QueryResult) -> Result<BTreeMap<String, Position>, StorageError> {
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

/// The values a page continues after, from a position's key.
fn key_values(position: &Position) -> Result<Vec<Value>, StorageError> {
    let Some(key) = &position.last_key else { return Ok(Vec::new()) };
    let values: Vec<Json> =
        serde_json::from_str(key).map_err(|error| StorageError::Decode(format!("a move's position: {error}")))?;
    values.iter().map(bindable).collect()
}

fn bindable(value: &Json) -> Result<Value, StorageError> {
    match value {
        Json::String(text) => Ok(Value::Text(text.clone())),
        Json::Number(number) => {
            number.as_i64().map(Value::Integer).ok_or_else(|| StorageError::Decode(format!("a key of {number}")))
        }
        other => Err(StorageError::Decode(format!("a key cannot be {other}"))),
    }
}

/// The rows of one page to copy: those of a read that fit `PAGE_BYTES`.
struct Page {
    rows: Vec<Row>,
    /// The JSON of `rows`, as the page sends them.
    json: String,
    /// The key of the last row, as JSON text.
    last_key: Option<String>,
    /// The read found the end of the mailbox's rows, and every row it read fits.
    reached_the_end: bool,
    /// The rows the read asked for.
    limit: i64,
}

impl Page {
    fn cut(table: &MovedTable, read: Vec<Row>, limit: i64) -> Result<Page, StorageError> {
        let found = read.len();
        let mut json = String::from("[");
        let mut rows = Vec::new();
        for row in read {
            let whole_numbers: Map<String, Json> =
                row.0.iter().map(|(column, value)| (column.clone(), whole(value))).collect();
            let encoded =
                serde_json::to_string(&whole_numbers).map_err(|error| StorageError::Decode(error.to_string()))?;
            if !rows.is_empty() && json.len() + encoded.len() + 1 > PAGE_BYTES {
                break;
            }
            if !rows.is_empty() {
                json.push(',');
            }
            json.push_str(&encoded);
            rows.push(row);
        }
        json.push(']');
        let last_key = match rows.last() {
            None => None,
            Some(row) => Some(key_of(table, row)?),
        };
        let reached_the_end = found < usize::try_from(limit).unwrap_or(usize::MAX) && rows.len() == found;
        Ok(Page { rows, json, last_key, reached_the_end, limit })
    }

    /// The rows the next page reads: about as many as fit `PAGE_BYTES`, at
    /// the size these were.
    fn next_limit(&self) -> i64 {
        if self.rows.is_empty() { self.limit } else { rows_that_fit(self.json.len(), self.rows.len()) }
    }

    /// The batch that writes this page into the mailbox's database: the
    /// guard on where it starts, the rows (triggers lifted around them), their
    /// search index rows, and the position it reached.
    fn statements(
        &self,
        table: &MovedTable,
        from: Option<&Position>,
        to: &Position,
    ) -> Result<Vec<Statement>, StorageError> {
        let mut batch = vec![store::position_is(table.name, from)];
        if let Some(first) = self.rows.first() {
            let columns: Vec<String> = first.0.keys().cloned().collect();
            if let Some(column) = columns.iter().find(|column| !is_identifier(column)) {
                return Err(StorageError::Decode(format!("{} has a column named {column:?}", table.name)));
            }
            batch.extend(table.lifted_triggers.iter().map(|name| store::trigger_lifted(name)));
            batch.push(store::copied(table, &columns, self.json.clone()));
            for name in table.lifted_triggers {
                let restored = store::trigger_restored(name)
                    .ok_or_else(|| StorageError::Backend(format!("no mailbox migration creates trigger {name}")))?;
                batch.push(restored);
            }
            if table.searchable {
                let rowids: Vec<Json> = self.rows.iter().filter_map(|row| row.0.get("rowid")).map(whole).collect();
                batch.extend(store::indexed(&Json::Array(rowids).to_string()));
            }
        }
        batch.push(store::position_recorded(table.name, to));
        Ok(batch)
    }
}

/// How many rows fit `PAGE_BYTES` when `rows` rows took `bytes`, within
/// `ROWS_PER_PAGE`.
fn rows_that_fit(bytes: usize, rows: usize) -> i64 {
    let average = (bytes / rows.max(1)).max(1);
    i64::try_from(PAGE_BYTES / average).unwrap_or(ROWS_PER_PAGE).clamp(1, ROWS_PER_PAGE)
}

/// `row`'s key in `table`, as JSON text.
fn key_of(table: &MovedTable, row: &Row) -> Result<String, StorageError> {
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
fn is_identifier(name: &str) -> bool {
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

/// Where a verification stands after a call of `verify_move`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verification {
    /// Some table is not yet copied whole: there is nothing to verify.
    CopyUnfinished,
    /// Pages were read and the progress kept: call again.
    Unfinished { pages: u32 },
    /// Both sides hold the same rows of every table: recorded in the chain.
    Verified { tables: Vec<TableTally> },
    /// The tables whose count or hash differ, in `MOVED_TABLES` order, with
    /// both sides' tallies. Nothing is recorded; the next call starts over.
    Differs { tables: Vec<String>, in_d1: Vec<TableTally>, in_mailbox: Vec<TableTally> },
}

/// Which side of the move a tally counts.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Side {
    /// The mailbox's rows in D1.
    D1,
    /// Every row of the mailbox's own database.
    Mailbox,
}

/// One side's running tally of one table, kept between calls.
#[derive(Clone, Debug, Deserialize, Serialize)]
struct Running {
    table: String,
    side: Side,
    /// The key of the last row counted (its values); `None` before the first.
    after: Option<Vec<Json>>,
    rows: u64,
    sha256: String,
    finished: bool,
}

impl Running {
    fn start(table: &MovedTable, side: Side) -> Running {
        let seed = Sha256::digest(format!("mailroom.mail-move.v1\n{}", table.name));
        Running { table: table.name.into(), side, after: None, rows: 0, sha256: hex(&seed), finished: false }
    }

    /// Counts `rows`, the next in key order, into the tally: the bytes of
    /// their canonical content.
    fn count(&mut self, table: &MovedTable, rows: &[Row]) -> Result<usize, StorageError> {
        let mut bytes = 0;
        for row in rows {
            let content = canonical(row)?;
            let mut hasher = Sha256::new();
            hasher.update(self.sha256.as_bytes());
            hasher.update(content.as_bytes());
            self.sha256 = hex(&hasher.finalize());
            self.rows += 1;
            bytes += content.len();
        }
        if let Some(last) = rows.last() {
            let key = key_of(table, last)?;
            self.after = Some(serde_json::from_str(&key).map_err(|error| StorageError::Decode(error.to_string()))?);
        }
        Ok(bytes)
    }

    fn tally(&self) -> TableTally {
        TableTally { table: self.table.clone(), rows: self.rows, sha256: self.sha256.clone() }
    }
}

/// A row's canonical content: its columns sorted by name, a whole number as
/// an integer however the database's driver typed it.
fn canonical(row: &Row) -> Result<String, StorageError> {
    let sorted: BTreeMap<&String, Json> = row.0.iter().map(|(column, value)| (column, whole(value))).collect();
    serde_json::to_string(&sorted).map_err(|error| StorageError::Decode(error.to_string()))
}

fn whole(value: &Json) -> Json {
    match value.as_f64() {
        Some(real) if value.is_f64() && real.fract() == 0.0 && real.abs() < 9_007_199_254_740_992.0 => {
            Json::from(real as i64)
        }
        _ => value.clone(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Verifies mailbox `mailbox_id`'s move once its copy is finished: reads
/// each table's rows page by page on both sides (the mailbox's rows in D1,
/// every row in the mailbox's database), counting them and chaining a
/// SHA-256 over their canonical content, with at most `round_trips` round
/// trips per call (at least four: the progress read, a page, and the two a
/// conclusion takes). The progress is kept in the mailbox's database between
/// calls, behind a guard, so two calls never interleave. When both sides are
/// read whole they are compared; a verification that passes is appended to
/// the organisation's chain (`MOVE_ACTION`). Either way the progress is
/// cleared, so the next call verifies afresh.
pub async fn verify_move(
    work: &Background<'_>,
    mailbox_id: &str,
    round_trips: u32,
) -> Result<Verification, BackgroundError> {
    let database = work.node().mailboxes.of(mailbox_id);
    let mailbox = Mailbox { work, database: Counted::new(&*database) };
    let before = work.round_trips();
    let spent = |work: &Background<'_>| work.round_trips() - before;
    let [positions, checks] = mailbox.execute::<2>(vec![store::positions(), store::checks()]).await?;
    let positions = read_positions(&positions)?;
    if MOVED_TABLES.iter().any(|table| !positions.get(table.name).is_some_and(|position| position.finished)) {
        return Ok(Verification::CopyUnfinished);
    }
    let (mut running, saved) = match checks.first() {
        Some(row) => {
            let progress: Vec<Running> = serde_json::from_str(&row.text("progress")?)
                .map_err(|error| BackgroundError::Unreadable(format!("a verification's progress: {error}")))?;
            (progress, Some(row.integer("saved")?))
        }
        None => (
            MOVED_TABLES
                .iter()
                .flat_map(|table| [Running::start(table, Side::D1), Running::start(table, Side::Mailbox)])
                .collect(),
            None,
        ),
    };
    let mut pages = 0;
    let mut limit = FIRST_PAGE_ROWS;
    while let Some(side) = running.iter_mut().find(|side| !side.finished) {
        if spent(work) + 3 > round_trips {
            break;
        }
        let table = MOVED_TABLES
            .iter()
            .find(|table| table.name == side.table)
            .ok_or_else(|| BackgroundError::Unreadable(format!("a verification counts {}", side.table)))?;
        let after =
            side.after.as_ref().map(|key| key.iter().map(bindable).collect::<Result<Vec<_>, _>>()).transpose()?;
        let rows = match side.side {
            Side::D1 => {
                let read = store::page(table, Whose::Mailbox(mailbox_id), after.as_deref(), limit);
                only(work.database().execute(vec![read]).await?)?.rows
            }
            Side::Mailbox => {
                let [read] =
                    mailbox.execute::<1>(vec![store::page(table, Whose::Every, after.as_deref(), limit)]).await?;
                read.rows
            }
        };
        pages += 1;
        let bytes = side.count(table, &rows)?;
        side.finished = (rows.len() as i64) < limit;
        limit = if side.finished { FIRST_PAGE_ROWS } else { rows_that_fit(bytes, rows.len()) };
    }
    if running.iter().any(|side| !side.finished) {
        let progress =
            serde_json::to_string(&running).map_err(|error| BackgroundError::Unreadable(error.to_string()))?;
        let next = saved.map_or(1, |saved| saved + 1);
        mailbox.execute_all(vec![store::checks_are(saved), store::checks_saved(progress, next)]).await?;
        return Ok(Verification::Unfinished { pages });
    }
    mailbox.execute_all(vec![store::checks_are(saved), store::checks_cleared()]).await?;
    let tallies = |wanted: Side| -> Vec<TableTally> {
        running.iter().filter(|side| side.side == wanted).map(Running::tally).collect()
    };
    let (in_d1, in_mailbox) = (tallies(Side::D1), tallies(Side::Mailbox));
    let differing: Vec<String> =
        in_d1.iter().zip(&in_mailbox).filter(|(d1, mailbox)| d1 != mailbox).map(|(d1, _)| d1.table.clone()).collect();
    if !differing.is_empty() {
        return Ok(Verification::Differs { tables: differing, in_d1, in_mailbox });
    }
    let detail = serde_json::to_string(&Json::Object(Map::from_iter([(
        "tables".to_string(),
        serde_json::to_value(&in_d1).map_err(|error| BackgroundError::Unreadable(error.to_string()))?,
    )])))
    .map_err(|error| BackgroundError::Unreadable(error.to_string()))?;
    let record = AuditRecord {
        at: work.now_ms(),
        actor: None,
        delegator: None,
        surface: None,
        action: MOVE_ACTION.into(),
        object: Some(mailbox_id.to_string()),
        outcome: "ok",
        detail: Some(detail),
        topic: None,
    };
    // Reads follow the mail from the moment its copy is known whole, in the
    // batch that records it: never before, never without the record.
    work.run(vec![mailboxes::mail_moved_now(mailbox_id, work.now_ms()), work.append(&record)]).await?;
    Ok(Verification::Verified { tables: in_d1 })
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn a_page_keeps_the_rows_that_fit_and_always_one() {
        let table = &MOVED_TABLES[0];
        let row = |rowid: i64, text: &str| {
            Row(Map::from_iter([("rowid".to_string(), Json::from(rowid)), ("text_body".to_string(), Json::from(text))]))
        };
        let big = "x".repeat(PAGE_BYTES / 2);
        let page = Page::cut(table, vec![row(1, &big), row(2, &big), row(3, "y")], 3).unwrap();
        assert_eq!(page.rows.len(), 1, "two halves and their brackets are more than a page");
        assert_eq!(page.last_key.as_deref(), Some("[1]"));
        assert!(!page.reached_the_end, "rows were left for the next page");
        assert_eq!(page.next_limit(), 1);
        let huge = "x".repeat(PAGE_BYTES * 2);
        let alone = Page::cut(table, vec![row(7, &huge)], 16).unwrap();
        assert_eq!((alone.rows.len(), alone.reached_the_end), (1, true));
        let small = Page::cut(table, vec![row(1, "a"), row(2, "b")], 2).unwrap();
        assert!(!small.reached_the_end, "a full read may have more after it");
        assert_eq!(small.next_limit(), ROWS_PER_PAGE);
        let empty = Page::cut(table, Vec::new(), 16).unwrap();
        assert_eq!((empty.last_key, empty.reached_the_end), (None, true));
    }
}
