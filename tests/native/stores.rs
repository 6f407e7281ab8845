//! Each domain's SQL lives in its store: a file named `store.rs` or a file under
//! a `store/` folder, whose functions build the statements a handler batches.
//! Every string literal in `src/` that reads as SQL is found here, and one
//! outside a store is a failure, so a handler cannot grow a query again.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::{rust_sources, scan_source};

/// Where SQL may live: a store; the storage layer of the core, whose `Insert`
/// spells the statement a store's row becomes, and whose mailbox storage
/// keeps a mailbox database's record of its own migrations (one statement for
/// the object and its native twin alike); the test kit (which builds worlds
/// and tampers with them) and the adapter (which speaks to D1).
fn may_hold_sql(relative: &Path) -> bool {
    let text = relative.to_string_lossy();
    relative.file_name().is_some_and(|name| name == "store.rs")
        || relative.components().any(|part| part.as_os_str() == "store")
        || text == "core/storage.rs"
        || text == "core/mailbox_storage.rs"
        || text.starts_with("testing/")
        || text.starts_with("adapter/")
}

/// The string literals of `source` outside test modules, comments skipped.
fn string_literals(source: &str) -> Vec<String> {
    scan_source(source).literals
}

/// Whether a literal reads as SQL or a piece of it: the statements' own
/// keywords, or the words a condition is built from.
fn reads_as_sql(literal: &str) -> bool {
    const MARKS: &[&str] = &[
        "SELECT ",
        "INSERT INTO",
        "INSERT OR ",
        "DELETE FROM",
        "REPLACE INTO",
        " SET ",
        " WHERE ",
        " FROM ",
        " IS NULL",
        " IS NOT NULL",
        "EXISTS (",
        " JOIN ",
        "ORDER BY",
        "COALESCE(",
        "PRAGMA ",
    ];
    MARKS.iter().any(|mark| literal.contains(mark))
}

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every file under `src/` holding a literal that reads as SQL, outside the
/// places SQL may live.
fn files_with_sql_outside_stores() -> BTreeSet<String> {
    let root = source_root();
    rust_sources(&root)
        .into_iter()
        .filter_map(|file| {
            let relative = file.strip_prefix(&root).ok()?.to_path_buf();
            if may_hold_sql(&relative) {
                return None;
            }
            let source = std::fs::read_to_string(&file).ok()?;
            string_literals(&source)
                .iter()
                .any(|literal| reads_as_sql(literal))
                .then(|| relative.to_string_lossy().replace('\\', "/"))
        })
        .collect()
}

#[test]
fn no_sql_outside_a_store() {
    let found = files_with_sql_outside_stores();
    assert!(found.is_empty(), "SQL outside a store (move it into the domain's store.rs): {found:?}");
}

#[test]
fn the_reader_finds_sql_in_every_kind_of_literal() {
    let source = "fn f() { let a = \"SELECT id FROM t\"; let b = r#\"DELETE FROM \"x\"\"#; }\n\
                  // \"SELECT 1 FROM commented\"\n\
                  fn g() { let c = \"a refusal: use DELETE /api/x\"; let d = '\"'; let e = \" AND b IS NULL\"; }\n\
                  #[cfg(test)] mod tests { const T: &str = \"UPDATE t SET a = 1\"; }";
    let literals = string_literals(source);
    let sql: Vec<&String> = literals.iter().filter(|literal| reads_as_sql(literal)).collect();
    assert_eq!(sql, ["SELECT id FROM t", "DELETE FROM \"x\"", " AND b IS NULL"]);
    // The attribute in a comment hides nothing, and a test helper in the
    // middle of a file hides only itself: the SQL after each is found.
    let source = "// tests follow #[cfg(test)]\nfn f() { let a = \"SELECT a FROM t\"; }\n\
                  #[cfg(test)]\nfn helper() { let h = \"SELECT h FROM t\"; }\n\
                  #[cfg(test)] use crate::x;\nfn g() { let b = \"SELECT b FROM t\"; }\n\
                  #[cfg(test)]\nmod tests { fn t() { let c = '{'; let d = \"SELECT d FROM t\"; } }\n";
    assert_eq!(string_literals(source), ["SELECT a FROM t", "SELECT b FROM t"]);
    assert!(may_hold_sql(Path::new("mail/store.rs")));
    assert!(may_hold_sql(Path::new("mail/store/receipts.rs")));
    assert!(!may_hold_sql(Path::new("mail/inbound.rs")));
}

/// The words a statement compares `column` with, or sets it to, in `sql`:
/// `column = 'x'`, `column <> 'x'`, `column IN ('x', 'y')`, with or without a
/// table's alias before the column.
fn words_for(sql: &str, column: &str) -> Vec<String> {
    let mut words = Vec::new();
    for (start, _) in sql.match_indices(column) {
        let before = sql[..start].chars().next_back();
        if before.is_some_and(|character| character.is_alphanumeric() || character == '_') {
            continue;
        }
        let rest = sql[start + column.len()..].trim_start();
        let list = if let Some(rest) = rest.strip_prefix("IN (").or_else(|| rest.strip_prefix("NOT IN (")) {
            &rest[..rest.find(')').unwrap_or(rest.len())]
        } else if let Some(rest) = rest.strip_prefix("= ").or_else(|| rest.strip_prefix("<> ")) {
            rest.split([' ', ',', ')']).next().unwrap_or("")
        } else {
            continue;
        };
        words.extend(
            list.split(',')
                .map(str::trim)
                .filter(|word| word.len() > 1 && word.starts_with('\'') && word.ends_with('\''))
                .map(|word| word.trim_matches('\'').to_string()),
        );
    }
    words
}

/// A state written into SQL is a second copy of its vocabulary's name: each
/// word a store compares a state column with, or sets it to, is one its
/// vocabulary in the contract has, and each schema's CHECK lists exactly the
/// vocabulary. A state renamed in the contract but not in a statement would
/// otherwise match no row, silently.
#[test]
fn every_state_a_store_or_the_schema_names_is_one_its_vocabulary_has() {
    use mailroom_contract::api::{
        AfterDue, AgentMessageKind, AgentMessageState, Channel, DeliveryOutcome, EventState, ExportState,
        RemoteAttemptOutcome, RemoteAttemptStep, RemoteDeliveryState, SendState, SenderAuthentication, ThreadStatus,
    };
    let export_states: Vec<&str> = ExportState::ALL.iter().map(|state| state.name()).collect();
    // (the stores under this folder, the column, its vocabulary)
    let vocabularies: [(&str, &str, &[&str]); 10] = [
        ("mail/sends", "state", SendState::NAMES),
        ("ediscovery", "state", &export_states),
        ("messaging", "state", AgentMessageState::NAMES),
        ("messaging", "kind", AgentMessageKind::NAMES),
        ("reminders", "outcome", DeliveryOutcome::NAMES),
        ("reminders", "closed_as", EventState::NAMES),
        ("reminders", "channel", Channel::NAMES),
        ("reminders", "after_due", AfterDue::NAMES),
        ("mail", "status", ThreadStatus::NAMES),
        ("peers", "state", RemoteDeliveryState::NAMES),
    ];
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut compared = 0;
    for path in rust_sources(&source) {
        let relative = path.strip_prefix(&source).unwrap();
        if !may_hold_sql(relative) {
            continue;
        }
        let sql = string_literals(&std::fs::read_to_string(&path).unwrap()).join(" ");
        for (folder, column, names) in vocabularies {
            if !relative.starts_with(folder) {
                continue;
            }
            for word in words_for(&sql, column) {
                assert!(
                    names.contains(&word.as_str()),
                    "{}: {column} compared with '{word}', not in {names:?}",
                    relative.display()
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 30, "the stores compare states with their names in {compared} places");

    let schema: String = crate::support::every_migration()
        .into_iter()
        .map(|migration| std::fs::read_to_string(migration).unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    let checked = |column: &str| -> Vec<Vec<String>> {
        schema
            .match_indices(&format!("CHECK ({column} IN ("))
            .map(|(start, lead)| {
                let list = &schema[start + lead.len()..];
                list[..list.find(')').unwrap_or(list.len())]
                    .split(',')
                    .map(|word| word.trim().trim_matches('\'').to_string())
                    .collect()
            })
            .collect()
    };
    let closing: Vec<&str> =
        [EventState::Done, EventState::Withdrawn, EventState::Expired].map(|state| state.name()).into();
    for (column, names) in [
        ("after_due", AfterDue::NAMES),
        ("closed_as", &closing[..]),
        ("channel", Channel::NAMES),
        ("outcome", DeliveryOutcome::NAMES),
        ("kind", AgentMessageKind::NAMES),
        ("status", ThreadStatus::NAMES),
        ("sender_authentication", SenderAuthentication::NAMES),
        ("attempt_outcome", RemoteAttemptOutcome::NAMES),
        ("step", RemoteAttemptStep::NAMES),
    ] {
        let lists = checked(column);
        assert!(!lists.is_empty(), "the schema checks {column}");
        for list in lists {
            assert_eq!(list, names, "the schema's CHECK on {column} lists its vocabulary, in order");
        }
    }
    assert_eq!(checked("state").iter().filter(|list| **list == export_states).count(), 1, "exports' states");
}
