//! The code map (`docs/code-map.md`) is generated from each source file's own
//! `//!` doc, and ARCHITECTURE.md is held to the tree: so neither can drift.
//!
//! `MAILROOM_WRITE_CODE_MAP=1 cargo test --test native code_map` writes the map;
//! without it, the test fails when the committed map differs from the source.

use std::path::{Path, PathBuf};

use crate::support::rust_sources;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The folders whose Rust files the map covers, in the order it lists them.
const MAPPED: &[&str] = &["contract/src", "src", "crates"];

/// ARCHITECTURE.md is a map a newcomer reads in one sitting.
const ARCHITECTURE_WORDS: usize = 2_500;

/// A file's `//!` doc, its first paragraph joined into one line.
fn first_paragraph_of_module_doc(source: &str) -> Option<String> {
    let paragraph: Vec<&str> = source
        .lines()
        .skip_while(|line| !line.trim_start().starts_with("//!"))
        .map_while(|line| line.trim_start().strip_prefix("//!"))
        .map(str::trim)
        .take_while(|line| !line.is_empty())
        .collect();
    (!paragraph.is_empty()).then(|| paragraph.join(" "))
}

fn relative(path: &Path) -> String {
    path.strip_prefix(ROOT).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

/// The map as it should read today.
fn generated_code_map() -> String {
    let mut map = String::from(
        "# Code map\n\n\
         Generated from each source file's `//!` doc by `tests/native/code_map.rs` \
         (`MAILROOM_WRITE_CODE_MAP=1 cargo test --test native code_map`); edit the \
         file's doc, not this page. `ARCHITECTURE.md` is the map of the whole.\n",
    );
    for folder in MAPPED {
        let mut files: Vec<PathBuf> = rust_sources(&Path::new(ROOT).join(folder))
            .into_iter()
            .filter(|file| !file.components().any(|part| part.as_os_str() == "target"))
            .collect();
        files.sort();
        map.push_str(&format!("\n## `{folder}/`\n\n"));
        for file in files {
            let source = std::fs::read_to_string(&file).unwrap();
            let doc = first_paragraph_of_module_doc(&source).unwrap_or_else(|| "(no module doc)".into());
            map.push_str(&format!("- `{}`: {doc}\n", relative(&file)));
        }
    }
    map
}

#[test]
fn the_code_map_is_generated_from_the_sources() {
    let path = Path::new(ROOT).join("docs/code-map.md");
    let generated = generated_code_map();
    if std::env::var_os("MAILROOM_WRITE_CODE_MAP").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/code-map.md is stale: run MAILROOM_WRITE_CODE_MAP=1 cargo test --test native code_map"
    );
    assert!(!generated.contains("(no module doc)"), "every source file says what it owns in a //! doc");
}

/// Every path ARCHITECTURE.md and the invariants name in backticks exists, and
/// every top-level module of `src/` is on the map.
#[test]
fn architecture_names_only_what_exists_and_every_module() {
    let architecture = std::fs::read_to_string(Path::new(ROOT).join("ARCHITECTURE.md")).unwrap();
    let words = architecture.split_whitespace().count();
    assert!(
        words <= ARCHITECTURE_WORDS,
        "ARCHITECTURE.md has {words} words; it is a map of at most {ARCHITECTURE_WORDS}"
    );
    for document in ["ARCHITECTURE.md", "docs/invariants.md"] {
        let text = std::fs::read_to_string(Path::new(ROOT).join(document)).unwrap();
        for path in named_paths(&text) {
            assert!(resolves(&path), "{document} names `{path}`, which is not in the tree");
        }
    }
    let source = Path::new(ROOT).join("src");
    for entry in std::fs::read_dir(&source).unwrap().filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().trim_end_matches(".rs").to_string();
        if name == "lib" {
            continue;
        }
        assert!(architecture.contains(&format!("`{name}")), "ARCHITECTURE.md does not place src/{name}");
    }
}

/// The backticked spans of `text` that read as a path in the repository: a
/// name with a file's extension, or ending in a slash, with no spaces, code or
/// placeholders (`tools/list` is a method, `src/` a folder).
fn named_paths(text: &str) -> Vec<String> {
    const EXTENSIONS: &[&str] =
        &[".rs", ".md", ".mjs", ".js", ".sh", ".toml", ".json", ".jsonc", ".css", ".html", ".sql"];
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| span.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '.'))
        .filter(|span| !span.contains([' ', '<', '(', '*', '?', '=']) && !span.contains("::"))
        .filter(|span| span.ends_with('/') || EXTENSIONS.iter().any(|extension| span.ends_with(extension)))
        .map(str::to_string)
        .collect()
}

/// Whether `path` names something in the tree: from the root, or from one of
/// the folders a map line is read from (`src/`, `contract/src/`, …); a bare
/// file or folder name, as a line about its folder writes it, names one of that name
/// anywhere in the project's own folders.
fn resolves(path: &str) -> bool {
    let path = path.trim_end_matches('/');
    let bases =
        ["", "src", "contract", "contract/src", "src/interface/scripts", "tests/native", "scripts", "tests/e2e"];
    if bases.iter().any(|base| Path::new(ROOT).join(base).join(path).exists()) {
        return true;
    }
    !path.contains('/')
        && ["src", "contract", "crates", "tests", "scripts", "docs", "migrations"]
            .iter()
            .any(|folder| holds_file_named(&Path::new(ROOT).join(folder), path))
}

fn holds_file_named(folder: &Path, name: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(folder) else { return false };
    entries.filter_map(Result::ok).any(|entry| {
        let path = entry.path();
        entry.file_name() == name || (path.is_dir() && holds_file_named(&path, name))
    })
}
