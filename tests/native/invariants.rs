//! The absences ARCHITECTURE.md promises, checked against the source: who may
//! name the tuple table, who may name the Worker runtime, who hands received
//! mail to mail-parser, and that every tuple predicate is classified for
//! delegation.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use mailroom::authz::tuples::{PREDICATES, Predicate};

use crate::support::rust_sources;

fn source_files() -> Vec<(PathBuf, String)> {
    rust_sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .collect()
}

fn offenders(allowed: impl Fn(&Path) -> bool, needles: &[&str]) -> Vec<String> {
    source_files()
        .into_iter()
        .filter(|(path, text)| !allowed(path) && needles.iter().any(|needle| text.contains(needle)))
        .map(|(path, _)| path.display().to_string())
        .collect()
}

#[test]
fn only_the_tuple_store_names_the_tuple_table() {
    let found = offenders(|path| path.ends_with("authz/store/tuples.rs"), &["relation_tuples"]);
    assert!(found.is_empty(), "only src/authz/store/tuples.rs may name relation_tuples; also: {found:?}");
}

#[test]
fn only_the_adapter_names_the_worker_runtime() {
    let found = offenders(
        |path| path.components().any(|component| component.as_os_str() == "adapter"),
        &["worker::", "js_sys", "wasm_bindgen", "web_sys"],
    );
    assert!(found.is_empty(), "only src/adapter/ may name the Workers runtime; also: {found:?}");
}

#[test]
fn received_mail_reaches_mail_parser_only_through_the_boundaries_workaround() {
    // mail-parser 0.11 takes a boundary written inside a line for a delimiter
    // (decision 0042): every parse of received mail is handed the bytes
    // `mail::boundaries` prepared, and happens in `mail::inbound`, in one place.
    const PARSE: &str = "MessageParser::default().parse(";
    let mut found = Vec::new();
    for (path, text) in source_files() {
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (at, _) in code.match_indices(PARSE) {
            let argument = &code[at + PARSE.len()..];
            let prepared = argument.starts_with("for_the_parser.bytes()") || argument.starts_with("ForTheParser::of(");
            if !prepared || !path.ends_with("mail/inbound.rs") {
                found.push(format!("{}: {}", path.display(), argument.lines().next().unwrap_or_default()));
            }
        }
    }
    assert!(found.is_empty(), "received mail parsed without mail::boundaries, or outside mail::inbound: {found:?}");
    let inbound = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/mail/inbound.rs")).unwrap();
    assert_eq!(
        inbound.matches(PARSE).count(),
        1,
        "received mail is parsed in one place (`with_message`), which this reads"
    );
}

#[test]
fn no_text_the_node_writes_names_a_route_by_its_template() {
    // A refusal that points elsewhere names the tool (`pause_agent`), never a
    // path with a placeholder (`/api/agents/:agentId/pause`) a reader would
    // copy back as it is (decision 0030). Comments may show templates.
    let templates: Vec<String> =
        mailroom_contract::PathParameter::NAMES.iter().map(|name| format!("/:{name}")).collect();
    let mut found = Vec::new();
    for (path, text) in source_files() {
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if templates.iter().any(|template| code.contains(template.as_str())) {
                found.push(format!("{}:{}: {}", path.display(), number + 1, code));
            }
        }
    }
    assert!(found.is_empty(), "text naming a route template: {found:#?}");
}

#[test]
fn every_message_the_node_writes_is_dated_by_its_own_clock() {
    // Left without a Date, mail-builder reads the system clock, which the
    // Workers runtime does not have: the Worker panics. Natively it would pass.
    for (path, text) in source_files() {
        for (index, _) in text.match_indices("MessageBuilder::new()") {
            let statement = &text[index..text[index..].find(';').map_or(text.len(), |end| index + end)];
            assert!(statement.contains(".date("), "{}: a MessageBuilder without .date(…)", path.display());
        }
    }
}

#[test]
fn the_contract_crate_does_no_io() {
    let contract = Path::new(env!("CARGO_MANIFEST_DIR")).join("contract");
    let manifest = std::fs::read_to_string(contract.join("Cargo.toml")).unwrap();
    assert!(!manifest.contains("worker"), "the contract crate must not depend on worker");
    let mut io = Vec::new();
    for entry in std::fs::read_dir(contract.join("src")).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.extension().is_some_and(|extension| extension == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            // Tests may read the committed files they compare against.
            let text = text.split("#[cfg(test)]").next().unwrap_or_default();
            if ["std::fs", "std::net", "std::env", "std::process"].iter().any(|needle| text.contains(needle)) {
                io.push(path.display().to_string());
            }
        }
    }
    assert!(io.is_empty(), "the contract library performs no I/O (its generator binary may): {io:?}");
}

#[test]
fn every_tuple_predicate_is_classified_and_intersected_ones_use_the_delegation_point() {
    // The tuple store builds every statement on the table; `authz::tuples`
    // re-exports them, so the store is where each is read.
    let source =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/authz/store/tuples.rs")).unwrap();
    // Every top-level function, whatever its visibility: a private helper that
    // reads the table is as much a predicate as a public one.
    let functions: Vec<(&str, &str)> = source
        .split('\n')
        .scan(0, |offset, line| {
            let start = *offset;
            *offset += line.len() + 1;
            Some((start, line))
        })
        .filter_map(|(start, line)| {
            let signature = ["pub(crate) ", "pub(super) ", "pub ", ""]
                .iter()
                .find_map(|visibility| line.strip_prefix(visibility))?;
            let signature = signature.strip_prefix("async ").unwrap_or(signature);
            let name = signature.strip_prefix("fn ")?.split(['(', '<']).next()?;
            let body = source[start..].split("\n}\n").next().unwrap_or_default();
            Some((name, body))
        })
        // The delegation point itself, which every intersected predicate is built on.
        .filter(|(name, _)| *name != "holder_condition")
        .collect();
    assert!(!functions.is_empty());
    for (name, body) in &functions {
        let classification = PREDICATES.iter().find(|(classified, _)| classified == name).map(|(_, how)| *how);
        match classification {
            None => panic!(
                "tuples::{name} is not classified: add it to PREDICATES as Intersected (it asks what a principal holds) \
                 or Exempt with the reason it does not"
            ),
            Some(Predicate::Intersected) => assert!(
                body.contains("holder_condition(") || body.contains("holds("),
                "tuples::{name} is classified as intersected but is not built on holder_condition"
            ),
            Some(Predicate::Exempt(reason)) => {
                assert!(reason.len() > 20, "tuples::{name} needs a real reason")
            }
        }
    }
    for (classified, _) in PREDICATES {
        assert!(
            functions.iter().any(|(name, _)| name == classified),
            "PREDICATES names tuples::{classified}, which does not exist"
        );
    }
}

/// The quoted words of every `<column> IN (…)` list in `sql` that follows `lead`.
fn listed_after<'sql>(sql: &'sql str, lead: &str) -> Vec<Vec<&'sql str>> {
    sql.match_indices(lead)
        .map(|(start, _)| {
            let list = &sql[start + lead.len()..];
            let list = &list[..list.find(')').unwrap_or(list.len())];
            list.split(',').map(|word| word.trim().trim_matches('\'')).collect()
        })
        .collect()
}

#[test]
fn the_schema_names_exactly_the_send_states_the_contract_declares() {
    use mailroom_contract::api::SendState;
    let schema =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/0002_mail.sql")).unwrap();
    let checked = listed_after(&schema, "CHECK (state IN (");
    assert_eq!(checked, vec![SendState::NAMES.to_vec()], "the sends table's CHECK lists every state, in order");
    // The triggers that keep a sealed send immutable, as first written and as
    // every later migration redefines them, name exactly the sealed states.
    let sealed: Vec<&str> = SendState::ALL.iter().filter(|state| state.is_sealed()).map(|state| state.name()).collect();
    let migrations = crate::support::every_migration();
    let all = migrations.iter().map(|path| std::fs::read_to_string(path).unwrap()).collect::<Vec<_>>().join("\n");
    let guarded: Vec<Vec<&str>> =
        [listed_after(&all, "OLD.state IN ("), listed_after(&all, "NEW.state NOT IN (")].concat();
    assert!(guarded.len() >= 3, "two triggers, three lists of sealed states at least");
    for list in guarded {
        assert_eq!(list, sealed);
    }
}

/// The quoted words `script` compares a state with (`state === "draft"`,
/// `send.state !== "submitted"`) or keys a table by state with (`{ draft: … }[state]`,
/// and the keys of a `…_STATES` table).
fn state_words(script: &str) -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    for (start, _) in script.match_indices("state") {
        // An agent's state is held to the agents' vocabulary, wherever it is compared
        // (`the_interface_compares_agents_only_with_agent_states`).
        if script[..start].ends_with("agent.") {
            continue;
        }
        let rest = script[start + "state".len()..].trim_start();
        for operator in ["===", "!=="] {
            if let Some(compared) =
                rest.strip_prefix(operator).map(str::trim_start).and_then(|rest| rest.strip_prefix('"'))
            {
                words.insert(compared.split('"').next().unwrap_or_default().to_string());
            }
        }
    }
    let mut tables: Vec<&str> = Vec::new();
    for (end, _) in script
        .match_indices("}[")
        .filter(|(end, _)| script[end + 2..].split(']').next().unwrap_or("").ends_with("state"))
    {
        let start = script[..end].rfind('{').unwrap_or(end);
        tables.push(&script[start + 1..end]);
    }
    for (start, _) in script.match_indices("_STATES = {") {
        let table = &script[start + "_STATES = {".len()..];
        let mut depth = 1;
        let end = table
            .char_indices()
            .find(|(_, c)| {
                depth += match c {
                    '{' => 1,
                    '}' => -1,
                    _ => 0,
                };
                depth == 0
            })
            .map_or(table.len(), |(index, _)| index);
        // Only the table's own keys: the word before each entry's `: {`.
        let keys =
            table[..end].lines().filter_map(|line| line.trim().split_once(": {").map(|(key, _)| key.to_string()));
        words.extend(keys);
    }
    for table in tables {
        for entry in table.split(',') {
            if let Some((key, _)) = entry.split_once(':') {
                let key = key.trim();
                if !key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                    words.insert(key.to_string());
                }
            }
        }
    }
    words
}

#[test]
fn the_interface_compares_agents_only_with_agent_states() {
    use mailroom_contract::api::AgentState;
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/interface/scripts");
    let mut seen = 0;
    for entry in std::fs::read_dir(scripts).unwrap().filter_map(Result::ok) {
        let script = std::fs::read_to_string(entry.path()).unwrap();
        for (start, _) in script.match_indices("agent.state") {
            let rest = script[start + "agent.state".len()..].trim_start();
            for operator in ["===", "!=="] {
                if let Some(compared) =
                    rest.strip_prefix(operator).map(str::trim_start).and_then(|rest| rest.strip_prefix('"'))
                {
                    let word = compared.split('"').next().unwrap_or_default();
                    assert!(
                        AgentState::parse(word).is_some(),
                        "{:?} compares an agent with `{word}`",
                        entry.file_name()
                    );
                    seen += 1;
                }
            }
        }
    }
    assert!(seen > 0, "the interface compares agents' states somewhere");
}

#[test]
fn the_interface_names_only_states_the_contract_declares() {
    use mailroom_contract::api::{AgentState, EventState, ExportState, SendState, WebhookDeliveryState};
    let export_states = ExportState::ALL.map(ExportState::name);
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/interface/scripts");
    let mut seen = 0;
    for entry in std::fs::read_dir(scripts).unwrap().filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let script = std::fs::read_to_string(entry.path()).unwrap();
        // Agents' scripts (agents.js, agent-ceiling.js) speak of agents' states, reminders' of events', exports'
        // of exports', webhooks' of deliveries'; every other script of sends'.
        let declared: &[&str] = if name.starts_with("agent") {
            AgentState::NAMES
        } else if name.starts_with("exports") {
            &export_states
        } else if name.starts_with("reminders") {
            EventState::NAMES
        } else if name.starts_with("webhooks") {
            WebhookDeliveryState::NAMES
        } else {
            SendState::NAMES
        };
        for word in state_words(&script) {
            assert!(
                declared.contains(&word.as_str()),
                "{name} names the state `{word}`, which the contract does not declare"
            );
            seen += 1;
        }
    }
    assert!(seen >= 10, "the scripts compare states {seen} times: the reader has stopped finding them");
    let sample = "if (send.state === \"draft\") x; const t = { sealed: \"on\", failed: \"off\" }[send.state];";
    assert_eq!(state_words(sample), ["draft", "failed", "sealed"].map(String::from).into());
    let table = "const AGENT_STATES = {\n  active: { text: \"active\" },\n  paused: { tone: \"quiet\" },\n};";
    assert_eq!(state_words(table), ["active", "paused"].map(String::from).into());
}
