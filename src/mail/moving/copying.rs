//! The copy: a mailbox's rows read from D1 a page at a time, in
//! `MOVED_TABLES` order, and written into its own database with their search
//! index rows and the position reached, behind a guard on where the page
//! starts.

use serde_json::{Map, Value as Json};

use super::rows::{
    FIRST_PAGE_ROWS, Mailbox, PAGE_BYTES, bindable, is_identifier, key_of, only, read_positions, rows_that_fit, whole,
};
use crate::core::background::{Background, BackgroundError};
use crate::core::storage::{Counted, Row, Statement, StorageError, Value};
use crate::mail::store::moving::{self as store, MOVED_TABLES, MovedTable, Position, Whose};

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

/// The values a page continues after, from a position's key.
fn key_values(position: &Position) -> Result<Vec<Value>, StorageError> {
    let Some(key) = &position.last_key else { return Ok(Vec::new()) };
    let values: Vec<Json> =
        serde_json::from_str(key).map_err(|error| StorageError::Decode(format!("a move's position: {error}")))?;
    values.iter().map(bindable).collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mail::moving::ROWS_PER_PAGE;

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
