//! Verifying a mailbox's move while its mail keeps changing: each table is
//! read a page at a time on both sides at once (the mailbox's rows in D1,
//! every row of its own database) over the same range of keys, and compared
//! row by row. Rows that agree are counted and chained into a SHA-256 over
//! their canonical content; a row that differs, or is on one side only, must
//! be one D1 noted a write to since the last replay (asked once every table
//! is compared), which the switch's replay carries over. Any other difference
//! fails the verification, naming its tables.
//!
//! Comparing the same range at once is what lets a busy mailbox verify: a
//! write between the two sides' reads of a row is noted, and nothing replays
//! while a verification is under way (it began from a replayed database, and
//! starts again if the database's replays changed between its calls). The
//! progress is kept in the mailbox's database between calls, behind a guard.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use super::replaying::replay_round;
use super::rows::{
    FIRST_PAGE_ROWS, Mailbox, TableTally, bindable, canonical, hex, key_of, only, read_positions, rows_that_fit,
};
use crate::core::background::{Background, BackgroundError};
use crate::core::storage::{Counted, Row, StorageError};
use crate::mail::store::moving::{self as store, MOVED_TABLES, MovedTable, Whose};

/// The most rows a verification lets differ on the way, each to be found
/// noted: more means the mailbox changes faster than it is read, and the
/// verification starts again after a replay.
pub const MOST_DIFFERING: usize = 1_000;

/// Where a verification stands after a call of `verify_move`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verification {
    /// Some table is not yet copied whole: there is nothing to verify.
    CopyUnfinished,
    /// Pages were compared and the progress kept: call again.
    Unfinished { pages: u32 },
    /// Both sides agree on every row but those D1 noted a write to, which
    /// the switch replays: each table's agreeing rows counted and hashed.
    Verified { tables: Vec<TableTally>, left_to_replay: usize },
    /// Rows differ that no write explains, in these tables (in
    /// `MOVED_TABLES` order). The next call starts over.
    Differs { tables: Vec<String> },
    /// More rows changed while the verification read them than it keeps:
    /// it starts over, after a replay.
    Changing,
}

/// A verification's progress between calls.
#[derive(Clone, Debug, Deserialize, Serialize)]
struct Checking {
    /// The replays the mailbox's database had taken when it began.
    replays: i64,
    /// The table being compared: its position in `MOVED_TABLES`.
    table: usize,
    /// The key both sides are compared up to in that table.
    after: Option<Vec<Json>>,
    /// The agreeing rows of each table reached, in order.
    tallies: Vec<TableTally>,
    /// The keys where the sides differ, by table: each must be noted.
    differing: Vec<(String, Vec<Json>)>,
    /// Every table compared and every difference found noted.
    verified: bool,
}

impl Checking {
    fn start(replays: i64) -> Checking {
        Checking { replays, table: 0, after: None, tallies: Vec::new(), differing: Vec::new(), verified: false }
    }

    fn tally(&mut self, table: &MovedTable) -> &mut TableTally {
        if self.tallies.last().is_none_or(|tally| tally.table != table.name) {
            let seed = Sha256::digest(format!("mailroom.mail-move.v1\n{}", table.name));
            self.tallies.push(TableTally { table: table.name.into(), rows: 0, sha256: hex(&seed) });
        }
        let last = self.tallies.len() - 1;
        &mut self.tallies[last]
    }
}

fn chain(tally: &mut TableTally, content: &str) {
    let mut hasher = Sha256::new();
    hasher.update(tally.sha256.as_bytes());
    hasher.update(content.as_bytes());
    tally.sha256 = hex(&hasher.finalize());
    tally.rows += 1;
}

/// Orders two keys as SQLite orders them: integers by value, text by its
/// bytes, and an integer before any text.
fn compare_keys(one: &[Json], other: &[Json]) -> Ordering {
    let value = |value: &Json| -> (u8, i64, String) {
        match value {
            Json::Number(number) => (0, number.as_i64().unwrap_or_default(), String::new()),
            Json::String(text) => (1, 0, text.clone()),
            other => (2, 0, other.to_string()),
        }
    };
    one.iter().map(value).cmp(other.iter().map(value))
}

fn key_values(table: &MovedTable, row: &Row) -> Result<Vec<Json>, StorageError> {
    serde_json::from_str(&key_of(table, row)?).map_err(|error| StorageError::Decode(error.to_string()))
}

/// Verifies mailbox `mailbox_id`'s move once its copy is finished, with at
/// most `round_trips` round trips (at least five): its first read; a
/// verification beginning replays what D1 noted first (three a round); each
/// page then reads both sides at once (two); a call that stops keeps its
/// progress (one), and the one that concludes asks D1 whether the differing
/// rows are noted (one) and keeps the verdict (one). A verification that passed answers so again until the
/// switch.
pub async fn verify_move(
    work: &Background<'_>,
    mailbox_id: &str,
    round_trips: u32,
) -> Result<Verification, BackgroundError> {
    let database = work.node().mailboxes.of(mailbox_id);
    let mailbox = Mailbox { work, database: Counted::new(&*database) };
    let before = work.round_trips();
    let spent = |work: &Background<'_>| work.round_trips() - before;
    let [positions, checks, replays] =
        mailbox.execute::<3>(vec![store::positions(), store::checks(), store::replays()]).await?;
    let positions = read_positions(&positions)?;
    if MOVED_TABLES.iter().any(|table| !positions.get(table.name).is_some_and(|position| position.finished)) {
        return Ok(Verification::CopyUnfinished);
    }
    let mut replays = replays.first().map(|row| row.integer("replays")).transpose()?.unwrap_or(0);
    let saved = checks.first().map(|row| row.integer("saved")).transpose()?;
    let under_way: Option<Checking> = checks
        .first()
        .map(|row| {
            serde_json::from_str(&row.text("progress")?).map_err(|error| StorageError::Decode(error.to_string()))
        })
        .transpose()?;
    let mut checking = match under_way {
        Some(checking) if checking.verified => {
            let left_to_replay = checking.differing.len();
            return Ok(Verification::Verified { tables: checking.tallies, left_to_replay });
        }
        Some(checking) if checking.replays == replays => checking,
        _ => {
            // Beginning: from a database holding what D1 noted so far.
            loop {
                // A round (its read, its write, its marks), and the save.
                if spent(work) + 4 > round_trips {
                    return Ok(Verification::Unfinished { pages: 0 });
                }
                let round = replay_round(work, &mailbox, mailbox_id, replays).await?;
                if round.count > 0 {
                    work.run(vec![store::notes_replayed(mailbox_id, round.notes)]).await?;
                    replays += 1;
                }
                if round.complete {
                    break;
                }
            }
            Checking::start(replays)
        }
    };
    let mut pages = 0;
    let mut limit = FIRST_PAGE_ROWS;
    while checking.table < MOVED_TABLES.len() && spent(work) + 4 <= round_trips {
        let table = &MOVED_TABLES[checking.table];
        let after =
            checking.after.as_ref().map(|key| key.iter().map(bindable).collect::<Result<Vec<_>, _>>()).transpose()?;
        let in_d1 =
            work.database().execute(vec![store::page(table, Whose::Mailbox(mailbox_id), after.as_deref(), limit)]);
        let in_mailbox = mailbox.execute::<1>(vec![store::page(table, Whose::Every, after.as_deref(), limit)]);
        let (in_d1, in_mailbox) = futures_util::future::join(in_d1, in_mailbox).await;
        let (in_d1, [in_mailbox]) = (only(in_d1?)?.rows, in_mailbox?);
        pages += 1;
        let full = |rows: &[Row]| rows.len() as i64 >= limit;
        let mut bound: Option<Vec<Json>> = None;
        for rows in [&in_d1, &in_mailbox.rows] {
            if full(rows)
                && let Some(last) = rows.last()
            {
                let last = key_values(table, last)?;
                if bound.as_ref().is_none_or(|bound| compare_keys(&last, bound) == Ordering::Less) {
                    bound = Some(last);
                }
            }
        }
        let bytes = compare(&mut checking, table, &in_d1, &in_mailbox.rows, bound.as_deref())?;
        if checking.differing.len() > MOST_DIFFERING {
            mailbox.execute_all(vec![store::checks_are(saved), store::checks_cleared()]).await?;
            return Ok(Verification::Changing);
        }
        limit = rows_that_fit(bytes, in_d1.len().max(in_mailbox.rows.len()));
        match bound {
            Some(bound) => checking.after = Some(bound),
            None => {
                checking.tally(table);
                checking.table += 1;
                checking.after = None;
                limit = FIRST_PAGE_ROWS;
            }
        }
    }
    if checking.table < MOVED_TABLES.len() {
        save(&mailbox, saved, &checking).await?;
        return Ok(Verification::Unfinished { pages });
    }
    let differing = unexplained(work, mailbox_id, &checking.differing).await?;
    if !differing.is_empty() {
        mailbox.execute_all(vec![store::checks_are(saved), store::checks_cleared()]).await?;
        return Ok(Verification::Differs { tables: differing });
    }
    checking.verified = true;
    save(&mailbox, saved, &checking).await?;
    let left_to_replay = checking.differing.len();
    Ok(Verification::Verified { tables: checking.tallies, left_to_replay })
}

/// Compares the rows both sides answered up to `bound` (all of them when
/// `None`), in key order: agreeing rows are tallied, the others' keys kept as
/// differing. Answers the bytes of content compared, for the next page's size.
fn compare(
    checking: &mut Checking,
    table: &MovedTable,
    in_d1: &[Row],
    in_mailbox: &[Row],
    bound: Option<&[Json]>,
) -> Result<usize, StorageError> {
    let within = |key: &[Json]| bound.is_none_or(|bound| compare_keys(key, bound) != Ordering::Greater);
    let keyed = |rows: &[Row]| -> Result<Vec<(Vec<Json>, String)>, StorageError> {
        let mut keyed = Vec::new();
        for row in rows {
            let key = key_values(table, row)?;
            if within(&key) {
                keyed.push((key, canonical(row)?));
            }
        }
        Ok(keyed)
    };
    let (d1, mailbox) = (keyed(in_d1)?, keyed(in_mailbox)?);
    let bytes = d1.iter().chain(&mailbox).map(|(_, content)| content.len()).sum();
    let (mut d1, mut mailbox) = (d1.into_iter().peekable(), mailbox.into_iter().peekable());
    loop {
        let order = match (d1.peek(), mailbox.peek()) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((one, _)), Some((other, _))) => compare_keys(one, other),
        };
        let (key, agreed) = match order {
            Ordering::Less => (d1.next().map(|(key, _)| key), None),
            Ordering::Greater => (mailbox.next().map(|(key, _)| key), None),
            Ordering::Equal => {
                let (key, content) = d1.next().unwrap_or_default();
                let (_, other) = mailbox.next().unwrap_or_default();
                let agreed = (content == other).then_some(content);
                (Some(key), agreed)
            }
        };
        match (agreed, key) {
            (Some(content), _) => chain(checking.tally(table), &content),
            (None, Some(key)) => checking.differing.push((table.name.to_string(), key)),
            (None, None) => {}
        }
    }
    Ok(bytes)
}

async fn save(mailbox: &Mailbox<'_, '_>, saved: Option<i64>, checking: &Checking) -> Result<(), BackgroundError> {
    let progress = serde_json::to_string(checking).map_err(|error| BackgroundError::Unreadable(error.to_string()))?;
    let next = saved.map_or(1, |saved| saved + 1);
    mailbox.execute_all(vec![store::checks_are(saved), store::checks_saved(progress, next)]).await?;
    Ok(())
}

/// The tables (in `MOVED_TABLES` order) holding a differing key that D1 has
/// no pending note of: one round trip, none when nothing differs.
async fn unexplained(
    work: &Background<'_>,
    mailbox_id: &str,
    differing: &[(String, Vec<Json>)],
) -> Result<Vec<String>, BackgroundError> {
    let tables: Vec<(&MovedTable, Vec<&Vec<Json>>)> = MOVED_TABLES
        .iter()
        .map(|table| (table, differing.iter().filter(|(name, _)| name == table.name).map(|(_, key)| key).collect()))
        .filter(|(_, keys): &(_, Vec<_>)| !keys.is_empty())
        .collect();
    if tables.is_empty() {
        return Ok(Vec::new());
    }
    let reads = tables
        .iter()
        .map(|(table, keys)| {
            store::pending_among(
                table,
                mailbox_id,
                Json::from(keys.iter().map(|key| Json::from((*key).clone())).collect::<Vec<_>>()).to_string(),
            )
        })
        .collect();
    let answers = work.database().execute(reads).await?;
    Ok(tables
        .iter()
        .zip(answers)
        .filter(|((_, keys), pending)| pending.rows.len() < keys.len())
        .map(|((table, _), _)| table.name.to_string())
        .collect())
}
