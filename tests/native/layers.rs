//! The layers ARCHITECTURE.md draws, held against the source: every `crate::`
//! and `super::` path in `src/` (test modules aside) is read as an import, and
//!
//! - no module imports one on a higher floor (core, then authz and audit, then
//!   the domains, then the surfaces, then the adapter and the test kit);
//! - a domain reaches another only through what that domain's module re-exports,
//!   never through one of its files;
//! - no two top-level modules import each other, and no two files of one module
//!   import each other: the machine surfaces (MCP, A2A) re-enter the dispatcher
//!   through the `Reentry` the core's context is handed, never by importing it;
//! - the contract crate's files import each other in one direction only.
//!
//! Reading imports from text is approximate, so the reader is tested too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::support::{rust_sources, scan_source};

/// The floors, lowest first: a module may import from its own floor's peers
/// (where allowed) and from every floor beneath it, never from above.
const FLOORS: &[(&str, &[&str])] = &[
    ("the core", &["core"]),
    ("authority and audit", &["authz", "audit"]),
    (
        "the domains",
        &[
            "identity",
            "mail",
            "ediscovery",
            "agents",
            "reminders",
            "messaging",
            "notifications",
            "oauth",
            "peers",
            "webhooks",
        ],
    ),
    ("the surfaces", &["dispatch", "schedule", "mcp", "a2a", "interface", "live"]),
    ("the adapter and the test kit", &["adapter", "testing"]),
];

/// Floors whose modules may import a peer on the same floor (each through its
/// root, and never in a circle).
const PEERS_ALLOWED: &[&str] = &["the domains", "the surfaces"];

fn floor_of(module: &str) -> Option<(usize, &'static str)> {
    FLOORS
        .iter()
        .enumerate()
        .find(|(_, (_, modules))| modules.contains(&module))
        .map(|(index, (name, _))| (index, *name))
}

/// `src/` (or another crate's source folder) as a tree of modules.
struct Crate {
    root: PathBuf,
    /// Every module's path (`["mail", "sends"]`), with its file.
    modules: BTreeMap<Vec<String>, PathBuf>,
}

impl Crate {
    fn read(root: &Path) -> Crate {
        let mut modules = BTreeMap::new();
        for file in rust_sources(root) {
            modules.insert(module_path(root, &file), file);
        }
        Crate { root: root.to_path_buf(), modules }
    }

    /// The longest module path that `path` starts with: what an import of `path`
    /// reaches into.
    fn resolve(&self, path: &[String]) -> Vec<String> {
        (0..=path.len())
            .rev()
            .map(|length| path[..length].to_vec())
            .find(|prefix| self.modules.contains_key(prefix))
            .unwrap_or_default()
    }

    /// Every module each module imports, as module paths.
    fn imports(&self) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
        self.modules
            .iter()
            .map(|(module, file)| {
                let source = std::fs::read_to_string(file).unwrap();
                let imported = imported_paths(&code_of(&source), module)
                    .into_iter()
                    .map(|path| self.resolve(&path))
                    .filter(|target| target != module)
                    .collect();
                (module.clone(), imported)
            })
            .collect()
    }
}

/// A file's module path under `root`: `core/context/mod.rs` → `["core", "context"]`.
fn module_path(root: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(root).unwrap();
    let mut parts: Vec<String> = relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The source without comments, string and character literals, and test
/// modules: only what the compiler reads as code outside tests.
fn code_of(source: &str) -> String {
    scan_source(source).code
}

/// Every path `code` names through `crate::` or `super::`, as a path from the
/// crate's root; `module` is the module the code belongs to. Grouped imports
/// (`use crate::{a, b::c};`) name each member.
fn imported_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let words: Vec<char> = code.chars().collect();
    let text: String = words.iter().collect();
    for (start, anchor) in text.match_indices("crate::").chain(text.match_indices("super::")) {
        let preceded_by_word =
            text[..start].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
        if preceded_by_word {
            continue;
        }
        let mut base: Vec<String> = if anchor == "crate::" {
            Vec::new()
        } else {
            // `super` in `a/b.rs` and in `a/b/mod.rs` (module `a::b`) alike is `a`.
            let mut parent = module.to_vec();
            parent.pop();
            parent
        };
        let mut rest = &text[start + anchor.len()..];
        while let Some(after) = rest.strip_prefix("super::") {
            base.pop();
            rest = after;
        }
        for member in expand(rest) {
            let mut path = base.clone();
            path.extend(member);
            paths.push(path);
        }
    }
    paths
}

/// The paths a `use` tail names: `a::b::C` → `[a, b, C]`; `{a, b::{c, d}}` → each.
fn expand(tail: &str) -> Vec<Vec<String>> {
    let mut segments = Vec::new();
    let mut rest = tail.trim_start();
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut end = 0;
            for (index, character) in group.char_indices() {
                match character {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    end = index;
                    break;
                }
            }
            let inner = &group[..end];
            let mut members = Vec::new();
            let mut depth = 0;
            let mut from = 0;
            for (index, character) in inner.char_indices() {
                match character {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        members.push(&inner[from..index]);
                        from = index + 1;
                    }
                    _ => {}
                }
            }
            members.push(&inner[from..]);
            return members
                .into_iter()
                .filter(|member| !member.trim().is_empty())
                .flat_map(|member| {
                    expand(member.trim()).into_iter().map(|tail| {
                        let mut path: Vec<String> = segments.clone();
                        path.extend(tail.into_iter().filter(|segment| segment != "self"));
                        path
                    })
                })
                .collect();
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            break;
        }
        rest = &rest[name.len()..];
        segments.push(name);
        match rest.strip_prefix("::") {
            Some(after) => rest = after,
            None => break,
        }
    }
    vec![segments]
}

/// The pairs of `graph`'s nodes that import each other, directly or around a
/// longer circle: each strongly connected set of more than one node.
fn circles<Node: Ord + Clone>(graph: &BTreeMap<Node, BTreeSet<Node>>) -> Vec<BTreeSet<Node>> {
    let reaches = |from: &Node| -> BTreeSet<Node> {
        let mut seen = BTreeSet::new();
        let mut frontier = vec![from.clone()];
        while let Some(node) = frontier.pop() {
            for next in graph.get(&node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    frontier.push(next.clone());
                }
            }
        }
        seen
    };
    let mut found: Vec<BTreeSet<Node>> = Vec::new();
    for node in graph.keys() {
        let forward = reaches(node);
        if !forward.contains(node) {
            continue;
        }
        let circle: BTreeSet<Node> = forward.into_iter().filter(|other| reaches(other).contains(node)).collect();
        if !found.contains(&circle) {
            found.push(circle);
        }
    }
    found
}

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_import_climbs_a_floor() {
    let source = Crate::read(&source_root());
    let mut climbing = Vec::new();
    for (module, imported) in source.imports() {
        let Some(from) = module.first().and_then(|top| floor_of(top)) else { continue };
        for target in imported {
            let Some(to) = target.first().and_then(|top| floor_of(top)) else { continue };
            let peers = to.0 == from.0 && module.first() != target.first();
            if to.0 > from.0 {
                climbing.push(format!("{} ({}) imports {} ({})", module.join("::"), from.1, target.join("::"), to.1));
            } else if peers && !PEERS_ALLOWED.contains(&from.1) {
                climbing.push(format!("{} imports its peer {} ({})", module.join("::"), target.join("::"), from.1));
            }
        }
    }
    assert!(climbing.is_empty(), "imports that climb a floor (see ARCHITECTURE.md, Layers):\n{}", climbing.join("\n"));
}

#[test]
fn every_module_is_on_a_floor() {
    let source = Crate::read(&source_root());
    let tops: BTreeSet<&String> = source.modules.keys().filter_map(|module| module.first()).collect();
    for top in tops {
        assert!(floor_of(top).is_some(), "src/{top} is on no floor: add it to FLOORS here and to ARCHITECTURE.md");
    }
}

#[test]
fn a_domain_reaches_another_only_through_what_it_re_exports() {
    let source = Crate::read(&source_root());
    let (_, domains) = FLOORS[2];
    let mut reaching_in = Vec::new();
    for (module, imported) in source.imports() {
        let Some(from) = module.first().filter(|top| domains.contains(&top.as_str())) else { continue };
        for target in imported.iter().filter(|target| target.len() > 1) {
            if domains.contains(&target[0].as_str()) && target[0] != *from {
                reaching_in.push(format!("{} reaches into {}", module.join("::"), target.join("::")));
            }
        }
    }
    assert!(
        reaching_in.is_empty(),
        "re-export what another domain needs from the domain's mod.rs:\n{}",
        reaching_in.join("\n")
    );
}

#[test]
fn no_new_circle_between_modules_or_files() {
    let source = Crate::read(&source_root());
    let imports = source.imports();
    let mut tops: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, imported) in &imports {
        let Some(from) = module.first() else { continue };
        let entry = tops.entry(from.clone()).or_default();
        entry.extend(imported.iter().filter_map(|target| target.first()).filter(|to| *to != from).cloned());
    }
    let between_modules: Vec<_> = circles(&tops);
    assert!(between_modules.is_empty(), "top-level modules in a circle: {between_modules:?}");

    // Within a module's folder, files in a circle, leaving out the edges between
    // a module and its own children (a parent re-exports what its children
    // define; children use what their parent defines).
    let mut files: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, imported) in &imports {
        let siblings = imported.iter().filter(|target| {
            let parent_child = target.starts_with(module) || module.starts_with(target);
            !parent_child && !target.is_empty()
        });
        files.entry(module.clone()).or_default().extend(siblings.cloned());
    }
    let between_files = circles(&files);
    assert!(between_files.is_empty(), "files that import each other: {between_files:?}");
}

#[test]
fn the_contract_has_no_circle() {
    let contract = Crate::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("contract/src"));
    let imports: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = contract
        .imports()
        .into_iter()
        .map(|(module, imported)| {
            let imported = imported
                .into_iter()
                .filter(|target| !target.is_empty() && !target.starts_with(&module) && !module.starts_with(target))
                .collect();
            (module, imported)
        })
        .collect();
    let found = circles(&imports);
    assert!(found.is_empty(), "contract files that import each other: {found:?}");
    assert!(contract.root.ends_with("contract/src"));
}

#[test]
fn the_reader_finds_imports_as_the_compiler_would() {
    let code = code_of(
        "use crate::core::{context::Context, http::{Request, Response}};\n\
         use super::AgentError; // crate::mail::ignored\n\
         let text = \"crate::identity::not_code\"; let quote = '\"'; let x = crate::audit::chain::head();\n\
         /* crate::agents::commented */ fn f<'a>(x: &'a str) {}\n\
         #[cfg(test)]\nmod tests { use crate::testing::TestNode; }",
    );
    let found = imported_paths(&code, &["agents".to_string(), "mint".to_string()]);
    let names: Vec<String> = found.iter().map(|path| path.join("::")).collect();
    assert_eq!(
        names,
        vec![
            "core::context::Context",
            "core::http::Request",
            "core::http::Response",
            "audit::chain::head",
            "agents::AgentError",
        ]
    );
    let circle =
        circles(&BTreeMap::from([(1, BTreeSet::from([2])), (2, BTreeSet::from([1])), (3, BTreeSet::from([1]))]));
    assert_eq!(circle, vec![BTreeSet::from([1, 2])]);
}

/// A module's `mod.rs` only declares its files and re-exports what they define,
/// so a file of the module never imports it: what files share (errors, helpers)
/// sits in a file of its own beneath them, and the imports inside a domain point
/// one way, down.
#[test]
fn no_file_imports_its_own_mod() {
    let source = Crate::read(&source_root());
    let mut climbing = BTreeSet::new();
    for (module, imported) in source.imports() {
        for target in imported {
            if !target.is_empty() && target.len() < module.len() && module.starts_with(&target) {
                climbing.insert(module.join("::"));
            }
        }
    }
    assert!(climbing.is_empty(), "files that import their own mod.rs (move what they use beneath them): {climbing:?}");
}
