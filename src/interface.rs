//! The browser interface: one page, its style, and its script as ES modules,
//! served at `GET /` and `GET /interface/:module`.
//!
//! The page is static; everything it shows comes from the same API a CLI or an
//! agent calls, with the session in `__Host-` cookies. The Content-Security-Policy
//! allows the page's style, its import map and its one inline entry script by
//! hash, and nothing else inline. The entry preloads every module at once and
//! starts the first;
//! `'strict-dynamic'` extends trust from it to the modules it imports, and the
//! import map pins every module's bytes with a Subresource Integrity hash, so the
//! browser runs exactly the modules compiled into this Worker (decision 0011).
//!
//! A received message's HTML is shown sanitised (DOMPurify, the one module not
//! the project's own) in a sandboxed frame that inherits this page's policy: so
//! the frame's one stylesheet is allowed by hash too, handed to the script in an
//! inert template (decision 0021).

use std::sync::OnceLock;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

use crate::core::http::Response;
use crate::core::refusal::Refusal;

/// A file of the interface, as compiled in: as written, or minified for the
/// Worker by `scripts/build.sh` (see `build.rs`).
macro_rules! interface_file {
    ($name:literal) => {
        include_str!(concat!(env!("MAILROOM_INTERFACE"), "/", $name))
    };
}

const PAGE: &str = interface_file!("index.html");
/// The page's stylesheet, written in parts (`style/`, in the order of their
/// numbers, each under 800 lines) and served as one: the parts joined are the
/// whole, byte for byte, and a test holds every part to being here.
const STYLE: &str = concat!(
    interface_file!("style/1-page.css"),
    interface_file!("style/2-sections.css"),
    interface_file!("style/3-inbox.css"),
);
/// The stylesheet of the frame a message's HTML is shown in (`message-body.js`).
const FRAME_STYLE: &str = interface_file!("message-frame.css");
/// The one script that frame runs: it tells the page the message's height.
const FRAME_SCRIPT: &str = interface_file!("message-frame.js");

/// Where the modules are served from; an import map key is this plus a file name.
const MODULE_PATH: &str = "/interface/";

/// The module the page starts: the shell, which imports every section.
const ENTRY_MODULE: &str = "main.js";

/// Every script module, by file name. A test holds this list to the files in
/// `src/interface/scripts/`, so a new section is a new file and a line here.
const MODULES: &[(&str, &str)] = &[
    ("account.js", interface_file!("scripts/account.js")),
    ("agent-ceiling.js", interface_file!("scripts/agent-ceiling.js")),
    ("agents.js", interface_file!("scripts/agents.js")),
    ("api.js", interface_file!("scripts/api.js")),
    ("approvals.js", interface_file!("scripts/approvals.js")),
    ("audit.js", interface_file!("scripts/audit.js")),
    ("butlers.js", interface_file!("scripts/butlers.js")),
    ("connections.js", interface_file!("scripts/connections.js")),
    ("consent.js", interface_file!("scripts/consent.js")),
    ("conversation.js", interface_file!("scripts/conversation.js")),
    ("dom.js", interface_file!("scripts/dom.js")),
    ("elsewhere.js", interface_file!("scripts/elsewhere.js")),
    ("exports.js", interface_file!("scripts/exports.js")),
    ("inbox-bulk.js", interface_file!("scripts/inbox-bulk.js")),
    ("inbox.js", interface_file!("scripts/inbox.js")),
    ("leaving.js", interface_file!("scripts/leaving.js")),
    ("mail-shared.js", interface_file!("scripts/mail-shared.js")),
    ("mail-words.js", interface_file!("scripts/mail-words.js")),
    ("mail.js", interface_file!("scripts/mail.js")),
    ("mailboxes.js", interface_file!("scripts/mailboxes.js")),
    ("main.js", interface_file!("scripts/main.js")),
    ("message-body.js", interface_file!("scripts/message-body.js")),
    ("names.js", interface_file!("scripts/names.js")),
    ("notes.js", interface_file!("scripts/notes.js")),
    ("notifications.js", interface_file!("scripts/notifications.js")),
    ("pager.js", interface_file!("scripts/pager.js")),
    ("peers.js", interface_file!("scripts/peers.js")),
    ("people.js", interface_file!("scripts/people.js")),
    ("refusals.js", interface_file!("scripts/refusals.js")),
    ("relations.js", interface_file!("scripts/relations.js")),
    ("reminders.js", interface_file!("scripts/reminders.js")),
    ("replies.js", interface_file!("scripts/replies.js")),
    ("sends.js", interface_file!("scripts/sends.js")),
    ("session.js", interface_file!("scripts/session.js")),
    ("shared.js", interface_file!("scripts/shared.js")),
    ("shortcuts.js", interface_file!("scripts/shortcuts.js")),
    ("signing-again.js", interface_file!("scripts/signing-again.js")),
    ("snooze.js", interface_file!("scripts/snooze.js")),
    ("sources.js", interface_file!("scripts/sources.js")),
    ("teams.js", interface_file!("scripts/teams.js")),
    ("vocabulary.js", interface_file!("scripts/vocabulary.js")),
    ("webhooks.js", interface_file!("scripts/webhooks.js")),
];

/// Modules that are not the project's own, by the file name they are served
/// as: pinned devDependencies, compiled in from `node_modules/` (see `build.rs`).
const VENDORED_MODULES: &[(&str, &str)] = &[("purify.js", include_str!(env!("MAILROOM_DOMPURIFY")))];

/// Every module served: the project's and the vendored.
fn served_modules() -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    MODULES.iter().chain(VENDORED_MODULES)
}

struct Shell {
    html: String,
    content_security_policy: String,
    /// Every served module with its version, URL and integrity, each hashed once.
    modules: Vec<PinnedModule>,
}

/// A served module as the page pins it: the URL it is asked for at (its
/// path and version) and its Subresource Integrity hash.
struct PinnedModule {
    name: &'static str,
    version: String,
    url: String,
    integrity: String,
}

fn sha256_base64(source: &str) -> String {
    format!("sha256-{}", STANDARD.encode(Sha256::digest(source.as_bytes())))
}

/// A module's version: the first 64 bits of its content's SHA-256, in hex.
/// Its URL carries it (`pinned`), so a browser may keep a module for a
/// year under one version and asks again only when its bytes change.
fn version_of(source: &str) -> String {
    Sha256::digest(source.as_bytes()).iter().take(8).map(|byte| format!("{byte:02x}")).collect()
}

/// Module `name` (of `source`) as the page pins it.
fn pinned(name: &'static str, source: &str) -> PinnedModule {
    let version = version_of(source);
    let url = format!("{MODULE_PATH}{name}?v={version}");
    PinnedModule { name, version, url, integrity: sha256_base64(source) }
}

fn shell_page() -> &'static Shell {
    static SHELL: OnceLock<Shell> = OnceLock::new();
    SHELL.get_or_init(|| {
        let modules: Vec<PinnedModule> = served_modules().map(|(name, source)| pinned(name, source)).collect();
        // Every module's path maps to its versioned URL, where a module's
        // relative imports land too, and each versioned URL is pinned by its hash.
        let imports: serde_json::Map<String, serde_json::Value> =
            modules.iter().map(|module| (format!("{MODULE_PATH}{}", module.name), module.url.clone().into())).collect();
        let integrity: serde_json::Map<String, serde_json::Value> =
            modules.iter().map(|module| (module.url.clone(), module.integrity.clone().into())).collect();
        let import_map = serde_json::json!({ "imports": imports, "integrity": integrity }).to_string();
        // The entry asks for every module at once (a module preload each, so the
        // browser need not discover them import by import), then adds the first
        // module as an element of its own rather than importing it: a
        // parser-inserted script's imports stay parser-inserted, which
        // `'strict-dynamic'` does not extend trust to (only a nonce would).
        let preloads: Vec<(&str, &str)> =
            modules.iter().map(|module| (module.url.as_str(), module.integrity.as_str())).collect();
        let (entry_url, entry_integrity) = modules
            .iter()
            .find(|module| module.name == ENTRY_MODULE)
            .map(|module| (module.url.as_str(), module.integrity.as_str()))
            .unwrap_or_default();
        let entry = format!(
            "for (const [href, integrity] of {}) document.head.append(Object.assign(document.createElement(\"link\"), \
             {{ rel: \"modulepreload\", href, integrity }}));\n\
             document.head.append(Object.assign(document.createElement(\"script\"), \
             {{ type: \"module\", src: \"{entry_url}\", integrity: \"{entry_integrity}\" }}));",
            serde_json::to_string(&preloads).unwrap_or_else(|_| "[]".into())
        );
        Shell {
            html: PAGE
                .replace("/*STYLE*/", STYLE)
                .replace("/*FRAME_STYLE*/", FRAME_STYLE)
                .replace("/*FRAME_SCRIPT_HASH*/", &sha256_base64(FRAME_SCRIPT))
                .replace("/*FRAME_SCRIPT*/", FRAME_SCRIPT)
                .replace("/*IMPORTMAP*/", &import_map)
                .replace("/*ENTRY*/", &entry),
            // The frame a message's HTML is shown in (a sandboxed srcdoc) inherits
            // this policy: its stylesheet is allowed here by hash, and nothing in
            // it may load what the page may not. Its images over https are allowed
            // here because a load must pass both policies; the frame's own holds
            // them back until the reader asks (decision 0044), and the page draws
            // nothing from mail but text.
            // Its one script, which says how tall the message is, is allowed
            // here by hash as well, as the frame's own policy allows it.
            content_security_policy: format!(
                "default-src 'none'; script-src '{}' '{}' '{}' 'strict-dynamic'; style-src '{}' '{}'; connect-src 'self'; \
                 img-src 'self' data: https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
                sha256_base64(&import_map),
                sha256_base64(&entry),
                sha256_base64(FRAME_SCRIPT),
                sha256_base64(STYLE),
                sha256_base64(FRAME_STYLE)
            ),
            modules,
        }
    })
}

/// `GET /`.
pub fn shell() -> Response {
    let shell = shell_page();
    Response::html(shell.html.clone(), &shell.content_security_policy)
}

/// `GET /interface/:module`, asked for at `version` (`v`): kept by the
/// browser for a year when that is the module's own version.
pub fn module(name: &str, version: Option<&str>) -> Result<Response, Refusal> {
    let (_, source) = served_modules()
        .find(|(module, _)| *module == name)
        .ok_or_else(|| Refusal::not_found("interface module", name))?;
    // Its version was hashed once, with the page.
    let pinned = shell_page().modules.iter().find(|module| module.name == name);
    let asked_for_its_own = version.is_some_and(|asked| pinned.is_some_and(|module| module.version == asked));
    Ok(Response::script(source, asked_for_its_own))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_file_is_served_and_nothing_else() {
        let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/interface/scripts");
        let mut files: Vec<String> = std::fs::read_dir(directory)
            .expect("src/interface/scripts exists")
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".js"))
            .collect();
        files.sort();
        let mut served: Vec<String> = MODULES.iter().map(|(name, _)| name.to_string()).collect();
        served.sort();
        assert_eq!(files, served, "every file in src/interface/scripts is a module in MODULES, and only those");
    }

    #[test]
    fn the_entry_module_says_what_every_module_owns() {
        // main.js's opening comment is the map of the script a reader starts
        // from: a module missing from it is one nobody finds.
        let main = MODULES.iter().find(|(name, _)| *name == "main.js").map(|(_, source)| *source).unwrap_or_default();
        let header: String = main.lines().take_while(|line| line.starts_with("//")).collect::<Vec<_>>().join("\n");
        let unnamed: Vec<&str> = MODULES
            .iter()
            .chain(VENDORED_MODULES)
            .map(|(name, _)| *name)
            .filter(|name| !header.contains(name))
            .collect();
        assert!(unnamed.is_empty(), "main.js's opening comment names no line for {unnamed:?}");
    }

    #[test]
    fn every_module_imports_only_served_modules() {
        for (name, source) in served_modules() {
            for line in source.lines().filter(|line| line.starts_with("import ")) {
                let Some(specifier) = line.split(['"', '\'']).nth(1) else { continue };
                let imported = specifier.trim_start_matches("./");
                assert!(
                    served_modules().any(|(module, _)| *module == imported),
                    "{name} imports {specifier}, which is not a served module"
                );
            }
        }
    }

    /// The keys of the object literal `const <name> = {` in `script`: each entry's
    /// word before `: {`, at the literal's own depth.
    fn table_keys(script: &str, name: &str) -> Vec<String> {
        let opening = format!("const {name} = {{");
        let start = script.find(&opening).map(|at| at + opening.len()).unwrap_or_else(|| panic!("{name} is declared"));
        let mut depth = 1;
        let mut keys = Vec::new();
        for line in script[start..].lines() {
            if depth == 1
                && let Some((key, _)) = line.trim().split_once(": {")
                && key.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            {
                keys.push(key.to_string());
            }
            depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
            if depth <= 0 {
                break;
            }
        }
        keys
    }

    #[test]
    fn connections_words_every_message_state_and_hold_the_contract_declares_and_no_other() {
        use mailroom_contract::api::{AgentMessageState, HeldBecause};
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/interface/scripts/connections.js");
        let script = std::fs::read_to_string(path).expect("connections.js exists");
        // Every state the node can answer has words, in the contract's order, and nothing else does.
        assert_eq!(table_keys(&script, "DELIVERY"), AgentMessageState::NAMES);
        assert_eq!(table_keys(&script, "HELD"), HeldBecause::NAMES);
        assert_eq!(
            table_keys(
                "const T = {\n  a: { x: { y: 1 } },\n  b_c: {\n    d: { e: 2 },\n  },\n};\nconst U = { z: {} };",
                "T"
            ),
            ["a", "b_c"]
        );
    }

    #[test]
    fn elsewhere_words_every_outbox_state_attempt_step_and_outcome_the_contract_declares_and_no_other() {
        use mailroom_contract::api::{RemoteAttemptOutcome, RemoteAttemptStep, RemoteDeliveryState};
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/interface/scripts/elsewhere.js");
        let script = std::fs::read_to_string(path).expect("elsewhere.js exists");
        assert_eq!(table_keys(&script, "OUTBOX"), RemoteDeliveryState::NAMES);
        assert_eq!(table_keys(&script, "ATTEMPT_STEPS"), RemoteAttemptStep::NAMES);
        assert_eq!(table_keys(&script, "ATTEMPT_OUTCOMES"), RemoteAttemptOutcome::NAMES);
    }

    #[test]
    fn mail_words_every_send_state_conversation_status_and_sender_check_the_contract_declares_and_no_other() {
        use mailroom_contract::api::{SendState, SenderAuthentication, ThreadStatus};
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/interface/scripts/mail-words.js");
        let script = std::fs::read_to_string(path).expect("mail-words.js exists");
        assert_eq!(table_keys(&script, "SEND_STATES"), SendState::NAMES);
        assert_eq!(table_keys(&script, "THREAD_STATUSES"), ThreadStatus::NAMES);
        assert_eq!(table_keys(&script, "SENDER_CHECKS"), SenderAuthentication::NAMES);
    }

    #[test]
    fn webhooks_word_every_delivery_state_the_contract_declares_and_no_other() {
        use mailroom_contract::api::WebhookDeliveryState;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/interface/scripts/webhooks.js");
        let script = std::fs::read_to_string(path).expect("webhooks.js exists");
        assert_eq!(table_keys(&script, "STATES"), WebhookDeliveryState::NAMES);
    }

    #[test]
    fn notifications_word_every_kind_the_contract_declares_and_no_other() {
        use mailroom_contract::api::NotificationKind;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/interface/scripts/notifications.js");
        let script = std::fs::read_to_string(path).expect("notifications.js exists");
        assert_eq!(table_keys(&script, "NOTIFICATION_KINDS"), NotificationKind::NAMES);
    }

    #[test]
    fn refusals_word_every_kind_of_id_the_node_names_and_no_other() {
        use crate::core::ids::IdKind;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/interface/scripts/refusals.js");
        let script = std::fs::read_to_string(path).expect("refusals.js exists");
        let table = script.split("const ID_KINDS = {\n").nth(1).and_then(|rest| rest.split("\n};").next());
        let worded: Vec<&str> = table
            .expect("ID_KINDS is declared")
            .lines()
            .filter_map(|line| line.trim().split_once(": \"").map(|(key, _)| key))
            .collect();
        let named: Vec<&str> = IdKind::ALL.iter().map(|kind| kind.prefix().trim_end_matches('_')).collect();
        assert_eq!(worded, named, "refusals.js words each id by its kind, in IdKind's order");
    }

    #[test]
    fn the_page_shows_in_order_exactly_the_controls_the_node_refuses_in_names() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/interface/scripts/dom.js");
        let script = std::fs::read_to_string(path).expect("dom.js exists");
        let list = script
            .split("export const DIRECTION_CONTROLS = [")
            .nth(1)
            .and_then(|rest| rest.split(']').next())
            .expect("dom.js lists DIRECTION_CONTROLS");
        let shown: Vec<u32> = list
            .split(',')
            .map(|entry| entry.trim().trim_matches('"').trim_start_matches("\\u"))
            .map(|hex| u32::from_str_radix(hex, 16).expect("each entry is \\uXXXX"))
            .collect();
        let refused: Vec<u32> =
            crate::core::text::DIRECTION_CONTROLS.iter().map(|(control, _)| u32::from(*control)).collect();
        assert_eq!(shown, refused);
    }

    #[test]
    fn the_page_pins_every_module_and_allows_nothing_else_inline() {
        let shell = shell_page();
        for (name, source) in served_modules() {
            let versioned = pinned(name, source).url;
            assert!(shell.html.contains(&format!("\"{versioned}\":\"{}\"", sha256_base64(source))), "{name}");
            assert!(
                shell.html.contains(&format!("\"{MODULE_PATH}{name}\":\"{versioned}\"")),
                "{name} maps to its version"
            );
            assert!(
                shell.html.contains(&format!("[\"{versioned}\",\"{}\"]", sha256_base64(source))),
                "{name} is preloaded"
            );
        }
        assert!(!shell.content_security_policy.contains("unsafe"));
        for placeholder in
            ["/*STYLE*/", "/*FRAME_STYLE*/", "/*FRAME_SCRIPT*/", "/*FRAME_SCRIPT_HASH*/", "/*IMPORTMAP*/", "/*ENTRY*/"]
        {
            assert!(PAGE.contains(placeholder) && !shell.html.contains(placeholder), "{placeholder} is filled");
        }
        // The message frame's stylesheet: allowed by its hash, and inert on the page itself.
        assert!(shell.content_security_policy.contains(&sha256_base64(FRAME_STYLE)));
        let template = format!("<template id=\"message-frame-style\"><style>{FRAME_STYLE}</style></template>");
        assert!(shell.html.contains(&template));
        // Its one script likewise, with the hash the frame's own policy names.
        assert!(shell.content_security_policy.contains(&sha256_base64(FRAME_SCRIPT)));
        let script = format!(
            "<template id=\"message-frame-script\" data-hash=\"{}\"><script>{FRAME_SCRIPT}</script></template>",
            sha256_base64(FRAME_SCRIPT)
        );
        assert!(shell.html.contains(&script));
    }

    #[test]
    fn every_moment_the_page_shows_is_worded_by_dom_js_alone() {
        // One format everywhere (issue 31): no module words a moment itself,
        // but for what is not a moment shown: a reminder's due day, in its
        // person's time zone, and the line a quote opens with in mail written.
        let worded_elsewhere = ["reminders.js", "sends.js"];
        for (name, source) in MODULES.iter().filter(|(name, _)| *name != "dom.js") {
            // A format in the browser's own words, or a date put in them directly.
            let words_a_moment = source.contains("new Intl.DateTimeFormat(undefined")
                || source
                    .split("new Date(")
                    .skip(1)
                    .any(|rest| rest.split_once(')').is_some_and(|(_, after)| after.starts_with(".toLocale")));
            assert_eq!(words_a_moment, worded_elsewhere.contains(name), "{name}");
        }
    }

    #[test]
    fn the_stylesheet_is_every_part_in_the_order_of_their_names() {
        let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/interface/style");
        let mut parts: Vec<std::path::PathBuf> = std::fs::read_dir(directory)
            .expect("src/interface/style exists")
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|extension| extension == "css"))
            .collect();
        parts.sort();
        let whole: String = parts.iter().map(|part| std::fs::read_to_string(part).expect("a part reads")).collect();
        assert_eq!(STYLE, whole, "STYLE joins every file in src/interface/style, in order, and nothing else");
    }

    #[test]
    fn the_sanitiser_is_served_as_a_module() {
        let (_, dompurify) = VENDORED_MODULES[0];
        assert!(dompurify.contains("export"), "an ES module: {}", &dompurify[..dompurify.len().min(200)]);
        assert!(module("purify.js", None).is_ok());
    }
}
