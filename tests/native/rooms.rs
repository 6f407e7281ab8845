//! A file is a room a reader can hold (STYLE.md): no source file the project
//! writes runs past 800 lines, in `src/`, `contract/src/`, `crates/`, `tests/`
//! or `scripts/`. A file that grows past it is split by the seams it already
//! has, as `contract/src/routes/` was (issue 28).
//!
//! What the contract's generator writes is no one's room to hold, so every path
//! `mailroom_contract::artifacts::all` names is left out by that rule, whatever
//! it is called. No file is excepted.
//!
//! A folder's `mod.rs` is its door, not a room: it holds its `//!` doc, the
//! `mod` declarations of its files and the `use`/`pub use` that re-export what
//! they define, and nothing else (no `fn`, type, `impl`, `const`, `static` or
//! macro outside a test module), in `src/`, `contract/src/` and each crate under
//! `crates/`. So a reader who opens a folder finds its code in files named for
//! what they own, and no file imports its own `mod.rs` (issue 28). No `mod.rs`
//! is excepted.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use mailroom_contract::{artifacts, registry};

use crate::support::{rust_sources, scan_source};

/// The most lines a source file holds.
const MOST_LINES: usize = 800;

/// Where the project's own source lives, from the repository root.
const FOLDERS: &[&str] = &["src", "contract/src", "crates", "tests", "scripts"];

/// What counts as source: Rust, the scripts (node and shell) and the page.
const EXTENSIONS: &[&str] = &["rs", "mjs", "js", "sh", "css", "html"];

/// Every source file under `folder`, however deep. Folders that are no one's
/// source are passed over: hidden ones (`tests/e2e/.artifacts/`, what a test
/// run leaves), `node_modules` and `target`; so are links, which lead out of
/// the tree.
fn sources(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            if !name.starts_with('.') && name != "node_modules" && name != "target" {
                files.extend(sources(&path));
            }
        } else if kind.is_file()
            && path.extension().is_some_and(|extension| EXTENSIONS.contains(&extension.to_string_lossy().as_ref()))
        {
            files.push(path);
        }
    }
    files
}

#[test]
fn no_source_file_runs_past_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let generated: BTreeSet<PathBuf> =
        artifacts::all(registry()).into_iter().map(|(path, _)| root.join(path)).collect();
    let mut too_long = Vec::new();
    let mut extensions_seen = BTreeSet::new();
    for folder in FOLDERS {
        let files = sources(&root.join(folder));
        assert!(!files.is_empty(), "no source found under {folder}: the walk is broken");
        for file in files.into_iter().filter(|file| !generated.contains(file)) {
            let relative = file.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            extensions_seen.insert(file.extension().unwrap().to_string_lossy().into_owned());
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            if lines > MOST_LINES {
                too_long.push(format!("{relative} ({lines} lines)"));
            }
        }
    }
    for extension in EXTENSIONS {
        assert!(extensions_seen.contains(*extension), "no .{extension} file found: the walk is broken");
    }
    assert!(
        too_long.is_empty(),
        "source files past {MOST_LINES} lines; split each by the seams it already has (STYLE.md):\n{}",
        too_long.join("\n")
    );
}

/// The source folders of every crate the project writes, from the repository
/// root: the node's, the contract's, and each one's under `crates/`.
fn crate_sources(root: &Path) -> Vec<PathBuf> {
    let mut folders = vec![root.join("src"), root.join("contract/src")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap().filter_map(Result::ok) {
        let source = entry.path().join("src");
        if source.is_dir() {
            folders.push(source);
        }
    }
    folders
}

/// The index just past the bracket that closes the one `text` opens with.
fn past_closing_bracket(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (index, character) in text.char_indices() {
        match character {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth = depth.checked_sub(1)?,
            _ => {}
        }
        if depth == 0 {
            return Some(index + character.len_utf8());
        }
    }
    None
}

/// An item of a module's code, written as its first line without attributes,
/// unless it is a `mod` declaration (`mod name;`, never a module written
/// inline) or a `use`.
fn beyond_declarations(item: &str) -> Option<String> {
    let mut rest = item.trim_start();
    while let Some(after_hash) = rest.strip_prefix('#') {
        let attribute = after_hash.strip_prefix('!').unwrap_or(after_hash).trim_start();
        rest = attribute[past_closing_bracket(attribute)?..].trim_start();
    }
    let written = rest.lines().next().unwrap_or_default().split('{').next().unwrap_or_default().trim().to_string();
    let mut unqualified = rest;
    if let Some(after_pub) = rest.strip_prefix("pub").filter(|after| after.starts_with([' ', '\n', '('])) {
        let after_pub = after_pub.trim_start();
        unqualified = if after_pub.starts_with('(') {
            after_pub[past_closing_bracket(after_pub)?..].trim_start()
        } else {
            after_pub
        };
    }
    let keyword: String = unqualified.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    let declares = match keyword.as_str() {
        "use" => true,
        "mod" => !unqualified.contains('{'),
        // What is left after the last item: nothing, or the `;` after a group.
        "" => unqualified.trim_start_matches(';').trim().is_empty(),
        _ => false,
    };
    (!declares).then_some(written)
}

/// The items of a module's source beyond its declarations and re-exports, read
/// as the compiler reads them (comments, literals and test modules left out).
fn items_beyond_declarations(source: &str) -> Vec<String> {
    let code = scan_source(source).code;
    let mut found = Vec::new();
    let mut item = String::new();
    let mut depth = 0usize;
    for character in code.chars() {
        item.push(character);
        match character {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        // An item ends at its `;`, or at the brace that closes its body.
        if depth == 0 && (character == ';' || character == '}') {
            found.extend(beyond_declarations(&item));
            item.clear();
        }
    }
    found.extend(beyond_declarations(&item));
    found
}

#[test]
fn a_mod_rs_only_declares_and_re_exports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut doors = 0;
    let mut holding = Vec::new();
    for folder in crate_sources(root) {
        for file in rust_sources(&folder).into_iter().filter(|file| file.ends_with("mod.rs")) {
            doors += 1;
            let relative = file.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            let source = std::fs::read_to_string(&file).unwrap();
            holding.extend(items_beyond_declarations(&source).into_iter().map(|item| format!("{relative}: {item}")));
        }
    }
    assert!(doors > 0, "no mod.rs found: the walk is broken");
    assert!(
        holding.is_empty(),
        "a mod.rs holds code; move it into a sibling file named for what it owns, and re-export from the mod.rs \
         what other modules name (issue 28):\n{}",
        holding.join("\n")
    );
}

#[test]
fn the_reader_finds_every_item_but_declarations() {
    let source = "//! A module.\n\
                  #![allow(clippy::unwrap_used)]\n\
                  #[rustfmt::skip]\nmod a;\npub(crate) mod b;\npub use a::{X, Y as Z};\nuse std::fmt;\n\
                  // fn commented() {}\n\
                  #[doc = \"fn in a literal { }\"]\npub mod c;\n\
                  const LIMIT: [u8; 2] = [1, 2];\n\
                  pub(super) fn f<'a>(x: &'a str) -> char { '{' }\n\
                  mod inline { use super::a; }\n\
                  #[derive(Debug)]\nstruct Unit;\n\
                  impl X for Y {}\n\
                  macro_rules! m { () => {}; }\n\
                  #[cfg(test)]\nmod tests { fn t() {} }\n";
    assert_eq!(
        items_beyond_declarations(source),
        [
            "const LIMIT: [u8; 2] = [1, 2];",
            "pub(super) fn f<'a>(x: &'a str) -> char",
            "mod inline",
            "struct Unit;",
            "impl X for Y",
            "macro_rules! m",
        ]
    );
    assert!(items_beyond_declarations("//! Only a door.\n\nmod a;\n\npub use a::A;\n").is_empty());
}
