//! A file is a room a reader can hold (STYLE.md): no source file the project
//! writes runs past 800 lines, in `src/`, `contract/src/`, `crates/`, `tests/`
//! or `scripts/`. A file that grows past it is split by the seams it already
//! has, as `contract/src/routes/` was (issue 28).
//!
//! What the contract's generator writes is no one's room to hold, so every path
//! `mailroom_contract::artifacts::all` names is left out by that rule, whatever
//! it is called. No file is excepted.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use mailroom_contract::{artifacts, registry};

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
