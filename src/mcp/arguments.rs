//! A tool call's arguments held to the tool's input schema before the route is
//! asked (decision 0030): a name the schema does not declare, or one it
//! requires that the call leaves out, is the protocol's error (-32602) naming
//! each, with the four-part refusal in `data`; what the values are is the
//! route's to judge, as over REST, and answered as a tool result.
//!
//! The schema is the one `tools/list` served (`contract/tools.json`), so what
//! a call is held to is exactly what the client was shown. A path argument
//! whose value names nothing (empty, or a placeholder left in) is as missing
//! as one left out: the route's path cannot be built from it.

use mailroom_contract::{Route, tools};
use serde_json::{Map, Value};

use crate::core::refusal::Refusal;
use crate::core::request_error::names_nothing;

/// What is wrong with a call's argument names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ArgumentFaults {
    tool: &'static str,
    /// Required arguments left out (or null, or a path argument naming nothing).
    missing: Vec<String>,
    /// Whether a path argument is among them: then no route can be asked.
    missing_from_the_path: bool,
    /// Arguments the schema does not declare.
    undeclared: Vec<String>,
    /// What the schema declares, each with whether it is required.
    declared: Vec<(String, bool)>,
}

impl ArgumentFaults {
    /// The faults of `arguments` against `input_schema`, the tool's as served,
    /// if any.
    pub(super) fn of(route: &Route, input_schema: &Value, arguments: &Map<String, Value>) -> Option<ArgumentFaults> {
        let properties = input_schema.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = input_schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut declared: Vec<(String, bool)> = properties
            .into_iter()
            .flat_map(|properties| properties.keys())
            .map(|name| (name.clone(), required.contains(&name.as_str())))
            .collect();
        // The required ones first: what a caller must send, then what it may.
        declared.sort_by_key(|(_, required)| !required);
        let path_arguments: Vec<&str> =
            route.path_parameters.iter().map(|parameter| tools::argument_name(*parameter)).collect();
        let missing: Vec<String> = required
            .iter()
            .filter(|name| match arguments.get(**name) {
                None | Some(Value::Null) => true,
                Some(Value::String(text)) => path_arguments.contains(name) && names_nothing(text),
                Some(_) => false,
            })
            .map(|name| name.to_string())
            .collect();
        let undeclared: Vec<String> =
            arguments.keys().filter(|name| !declared.iter().any(|(known, _)| known == *name)).cloned().collect();
        if missing.is_empty() && undeclared.is_empty() {
            return None;
        }
        let missing_from_the_path = missing.iter().any(|name| path_arguments.contains(&name.as_str()));
        Some(ArgumentFaults { tool: route.tool, missing, missing_from_the_path, undeclared, declared })
    }

    /// Whether a path argument is missing, so the route's own path cannot be
    /// built: REST answers such a path without reading anything, and so does
    /// the tool call.
    pub(super) fn leave_the_path_incomplete(&self) -> bool {
        self.missing_from_the_path
    }
}

/// Names as a reader sees them: `a`, `a` and `b`, `a`, `b` and `c`.
fn listed(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

impl From<ArgumentFaults> for Refusal {
    fn from(faults: ArgumentFaults) -> Refusal {
        let tool = faults.tool;
        let message = match (faults.missing.is_empty(), faults.undeclared.is_empty()) {
            (false, true) => format!("{tool} needs {}, which the call leaves out.", listed(&faults.missing)),
            (true, false) => format!("{tool} takes no argument {}.", listed(&faults.undeclared)),
            _ => format!(
                "{tool} needs {}, which the call leaves out, and takes no argument {}.",
                listed(&faults.missing),
                listed(&faults.undeclared)
            ),
        };
        let declared: Vec<String> = faults
            .declared
            .iter()
            .map(|(name, required)| if *required { format!("{name} (required)") } else { name.clone() })
            .collect();
        let reason = if declared.is_empty() {
            "Its input schema (in tools/list) declares no arguments.".to_string()
        } else {
            format!("Its input schema (in tools/list) declares: {}.", declared.join(", "))
        };
        // An argument named as a path names it (`mailboxId`) is the same
        // argument in the tools' one style, snake_case: say which.
        let renamed: Vec<String> = faults
            .undeclared
            .iter()
            .filter_map(|name| {
                let argument = tools::argument_name(mailroom_contract::PathParameter::parse(name)?);
                faults.declared.iter().any(|(known, _)| known == argument).then(|| format!("`{name}` is `{argument}`"))
            })
            .collect();
        let mut fix =
            "Call it again with every required argument and only the arguments its schema declares".to_string();
        if !renamed.is_empty() {
            fix.push_str(&format!(" (every argument is snake_case: {})", renamed.join(", ")));
        }
        fix.push('.');
        Refusal::new(400, "invalid_arguments", message, reason, fix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mailroom_contract::{RouteId, registry};
    use serde_json::json;

    fn faults(arguments: Value) -> Option<ArgumentFaults> {
        let route = registry().route(RouteId::ListMessages);
        let schema = json!({
            "type": "object",
            "properties": { "mailbox_id": {}, "limit": {}, "cursor": {} },
            "required": ["mailbox_id"],
        });
        ArgumentFaults::of(route, &schema, arguments.as_object().unwrap())
    }

    #[test]
    fn a_call_is_held_to_the_names_its_schema_declares() {
        assert_eq!(faults(json!({ "mailbox_id": "mbx_1", "limit": 5, "cursor": null })), None);
        let refusal = Refusal::from(faults(json!({ "mailboxId": "mbx_1", "colour": 1 })).unwrap());
        assert_eq!(refusal.code, "invalid_arguments");
        assert_eq!(
            refusal.message,
            "list_messages needs `mailbox_id`, which the call leaves out, and takes no argument `colour` and `mailboxId`."
        );
        assert!(refusal.reason.contains("mailbox_id (required), "), "{}", refusal.reason);
        assert!(refusal.fix.contains("`mailboxId` is `mailbox_id`"), "{}", refusal.fix);
        for nothing in [
            json!({}),
            json!({ "mailbox_id": null }),
            json!({ "mailbox_id": "" }),
            json!({ "mailbox_id": ":mailboxId" }),
        ] {
            let found = faults(nothing.clone()).unwrap();
            assert!(found.leave_the_path_incomplete(), "{nothing}");
            assert_eq!(Refusal::from(found).message, "list_messages needs `mailbox_id`, which the call leaves out.");
        }
    }
}
