//! Each domain's SQL lives in its store: a file named `store.rs` or a file under
//! a `store/` folder, whose functions build the statements a handler batches.
//! Every string literal in `src/` that reads as SQL is found here, and one
//! outside a store is a failure, so a handler cannot grow a query again.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::{rust_sources, scan_source};

/// Where SQL may live: a store; the storage layer of the core, whose `Insert`
/// spells the statement a store's row becomes; the test kit (which builds
/// worlds and tampers with them) and the adapter (which speaks to D1).
fn may_hold_sql(relative: &Path) -> bool {
    let text = relative.to_string_lossy();
    relative.file_name().is_some_and(|name| name == "store.rs")
        || relative.components().any(|part| part.as_os_str() == "store")
        || text == "core/storage.rs"
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
