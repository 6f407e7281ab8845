//! Writes the files generated from the contract (OpenAPI, the Agent Skill, the
//! route table), or with `--check` fails if any committed one differs.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let check = std::env::args().any(|argument| argument == "--check");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut stale = Vec::new();
    for (path, contents) in mailroom_contract::artifacts::all(mailroom_contract::registry()) {
        let target = root.join(path);
        let current = std::fs::read_to_string(&target).unwrap_or_default();
        if current == contents {
            continue;
        }
        if check {
            stale.push(path);
        } else {
            let written = match target.parent() {
                Some(parent) => std::fs::create_dir_all(parent).and_then(|()| std::fs::write(&target, &contents)),
                None => std::fs::write(&target, &contents),
            };
            if let Err(error) = written {
                eprintln!("could not write {path}: {error}");
                return ExitCode::FAILURE;
            }
            println!("wrote {path}");
        }
    }
    if stale.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("out of date: {}\nrun `cargo run -p mailroom-contract --bin generate`", stale.join(", "));
        ExitCode::FAILURE
    }
}
