//! The names of the people and agents mail mentions (a conversation's
//! assignee, a send's author and decider): a mailbox's rows hold their ids,
//! and the directory, in D1, their names. Read after the mailbox has
//! answered, since only its rows say whose names are wanted (decision 0040).

use std::collections::BTreeMap;

use crate::core::storage::{QueryResult, Statement, StorageError};
use crate::mail::store::names as store;

/// The names the directory gave, by id.
#[derive(Debug, Default)]
pub struct Names(BTreeMap<String, String>);

impl Names {
    /// The statement that reads the names of `ids` (each asked once).
    pub fn of<'a>(ids: impl IntoIterator<Item = &'a str>) -> Statement {
        let mut ids: Vec<&str> = ids.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        store::names_of(&ids)
    }

    /// The names `of`'s statement read.
    pub fn read(result: &QueryResult) -> Result<Names, StorageError> {
        result.rows.iter().map(|row| Ok((row.text("id")?, row.text("name")?))).collect::<Result<_, _>>().map(Names)
    }

    /// The name of `id`, if the directory has one.
    pub fn of_id(&self, id: &str) -> Option<String> {
        self.0.get(id).cloned()
    }
}
