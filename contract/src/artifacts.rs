//! The files generated from the contract, by path from the repository root.
//!
//! `cargo run -p mailroom-contract --bin generate` writes them; the test below
//! (part of the test command) fails when any committed file differs from what the
//! contract generates, naming the file and the command that fixes it.

use crate::registry::Registry;
use crate::{openapi, skill, tools};

/// Every generated file: (path from the repository root, contents).
pub fn all(registry: &Registry) -> Vec<(&'static str, String)> {
    let mut openapi = serde_json::to_string_pretty(&openapi::document(registry)).unwrap_or_default();
    openapi.push('\n');
    // One tool a line, each compact: the Worker serves each line's bytes as
    // they are, spliced into `tools/list`'s answer (decision 0034).
    let lines: Vec<String> = match tools::catalogue(registry) {
        serde_json::Value::Array(tools) => {
            tools.iter().map(|tool| serde_json::to_string(tool).unwrap_or_default()).collect()
        }
        _ => Vec::new(),
    };
    let catalogue = format!("[\n{}\n]\n", lines.join(",\n"));
    vec![
        ("contract/openapi.json", openapi),
        ("contract/tools.json", catalogue),
        ("skills/mailroom/SKILL.md", skill::skill(registry)),
        ("docs/routes.md", skill::route_table(registry)),
    ]
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn generated_artifacts_are_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for (path, expected) in super::all(crate::registry()) {
            let committed = std::fs::read_to_string(root.join(path)).unwrap_or_default();
            assert!(
                committed == expected,
                "{path} is not what the contract generates; run `cargo run -p mailroom-contract --bin generate` and commit the result"
            );
        }
    }
}
