//! The A2A client's wire, as the outbox speaks it to agents elsewhere: what a
//! card says (its JSON-RPC endpoint and version, whether it pushes, how long
//! it may be kept), the request that sends a message (its parts, its push
//! config and the token only this node can make), and parts as they come back.
//! Pure functions of what was read, tested here; the outbox does the I/O.

use hmac::{Hmac, KeyInit, Mac};
use mailroom_contract::api::{REMOTE_CARD_DEFAULT_SECONDS, REMOTE_CARD_LONGEST_SECONDS};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::core::bindings::Fetched;
use crate::core::crypto::hex;

/// How an answer that is not the one hoped for reads in a record.
pub(super) fn answered(fetched: &Fetched) -> String {
    match (&fetched.location, fetched.status) {
        (Some(location), 300..=399) => {
            format!("answered {} with a redirect to {location}, which the node does not follow", fetched.status)
        }
        (_, status) => format!("answered {status}"),
    }
}

/// The JSON-RPC endpoint a card names, and its A2A version: a 1.0 card's
/// `supportedInterfaces` (its first JSON-RPC interface of 1.0, else of 0.3),
/// or a 0.3 card's `url` (when its preferred transport is JSON-RPC) or a
/// JSON-RPC entry of its `additionalInterfaces`.
pub(super) fn card_endpoint(card: &Value) -> Option<(String, String)> {
    let json_rpc = |binding: Option<&Value>| {
        binding.and_then(Value::as_str).is_none_or(|binding| binding.eq_ignore_ascii_case("JSONRPC"))
    };
    let version_of = |text: &str| {
        if text.starts_with("1.") || text == "1" {
            Some("1.0")
        } else if text.starts_with("0.3") {
            Some("0.3")
        } else {
            None
        }
    };
    if let Some(interfaces) = card.get("supportedInterfaces").and_then(Value::as_array) {
        let mut found: Vec<(String, &str)> = interfaces
            .iter()
            .filter(|interface| json_rpc(interface.get("protocolBinding")))
            .filter_map(|interface| {
                let url = interface.get("url")?.as_str()?;
                let version = version_of(interface.get("protocolVersion").and_then(Value::as_str).unwrap_or("1.0"))?;
                Some((url.to_string(), version))
            })
            .collect();
        found.sort_by_key(|(_, version)| *version != "1.0");
        if let Some((url, version)) = found.into_iter().next() {
            return Some((url, version.to_string()));
        }
    }
    let version = card.get("protocolVersion").and_then(Value::as_str).and_then(version_of)?;
    if let Some(url) = card.get("url").and_then(Value::as_str)
        && json_rpc(card.get("preferredTransport"))
    {
        return Some((url.to_string(), version.to_string()));
    }
    card.get("additionalInterfaces").and_then(Value::as_array)?.iter().find_map(|interface| {
        let transport = interface.get("transport").and_then(Value::as_str)?;
        transport
            .eq_ignore_ascii_case("JSONRPC")
            .then(|| Some((interface.get("url")?.as_str()?.to_string(), version.to_string())))?
    })
}

/// How long a card may be kept, in seconds, by its `Cache-Control`:
/// `no-store` or `no-cache` not at all, `max-age` as it says (within a day),
/// otherwise `REMOTE_CARD_DEFAULT_SECONDS`.
pub(super) fn freshness_seconds(cache_control: Option<&str>) -> i64 {
    let Some(header) = cache_control else { return REMOTE_CARD_DEFAULT_SECONDS };
    let directives: Vec<String> = header.split(',').map(|directive| directive.trim().to_ascii_lowercase()).collect();
    if directives.iter().any(|directive| directive == "no-store" || directive == "no-cache") {
        return 0;
    }
    directives
        .iter()
        .find_map(|directive| directive.strip_prefix("max-age=")?.trim_matches('"').parse::<i64>().ok())
        .map_or(REMOTE_CARD_DEFAULT_SECONDS, |seconds| seconds.clamp(0, REMOTE_CARD_LONGEST_SECONDS))
}

/// The request that sends the message: its parts, with the message's own id
/// as the A2A `messageId`, continuing the agent's `context` when the
/// conversation has one, asking to be answered at once with the task.
pub(super) fn send_request(
    message_id: &str,
    content: &str,
    context: Option<&str>,
    v1: bool,
    push: Option<Value>,
) -> Value {
    let content: Value = serde_json::from_str(content).unwrap_or(Value::Null);
    let parts: Vec<Value> = parts_of(&content)
        .into_iter()
        .map(|mut part| {
            if !v1 {
                part["kind"] = if part.get("text").is_some() { "text" } else { "data" }.into();
            }
            part
        })
        .collect();
    let mut request = if v1 {
        json!({ "jsonrpc": "2.0", "id": message_id, "method": "SendMessage", "params": {
            "message": { "messageId": message_id, "role": "ROLE_USER", "parts": parts },
            "configuration": { "returnImmediately": true },
        } })
    } else {
        json!({ "jsonrpc": "2.0", "id": message_id, "method": "message/send", "params": {
            "message": { "kind": "message", "messageId": message_id, "role": "user", "parts": parts },
            "configuration": { "blocking": false },
        } })
    };
    if let Some(context) = context {
        request["params"]["message"]["contextId"] = context.into();
    }
    if let Some(push) = push {
        let field = if v1 { "taskPushNotificationConfig" } else { "pushNotificationConfig" };
        request["params"]["configuration"][field] = push;
    }
    request
}

/// Where an agent elsewhere pushes word of message `message_id`'s task.
pub(super) fn push_url(origin: &str, message_id: &str) -> String {
    format!("{origin}/a2a/outbox/{message_id}")
}

/// The token a push about message `message_id` must carry: a MAC under the
/// node's session key, so it is checked without storing it and nobody who
/// reads D1 can forge one.
pub fn push_token(session_key: &[u8], message_id: &str) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(session_key)
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(b"mailroom a2a push\0");
    mac.update(message_id.as_bytes());
    hex(&mac.finalize().into_bytes())
}

/// Content as A2A parts: parts it already holds, text, or data.
fn parts_of(content: &Value) -> Vec<Value> {
    match content {
        Value::String(text) => vec![json!({ "text": text })],
        Value::Object(object) if object.get("parts").and_then(Value::as_array).is_some() => {
            object["parts"].as_array().cloned().unwrap_or_default()
        }
        other => vec![json!({ "data": other })],
    }
}

/// Parts as the node stores them: text and data, without 0.3's `kind`.
pub(super) fn stored_parts(parts: Option<&Value>) -> Vec<Value> {
    parts
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter_map(|part| {
                    if let Some(text) = part.get("text").and_then(Value::as_str) {
                        Some(json!({ "text": text }))
                    } else {
                        part.get("data").filter(|data| !data.is_null()).map(|data| json!({ "data": data }))
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_card_names_its_json_rpc_endpoint_preferring_a2a_1_0() {
        let v1 = json!({ "supportedInterfaces": [
            { "url": "https://b.example/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0" },
            { "url": "https://b.example/old", "protocolBinding": "JSONRPC", "protocolVersion": "0.3" },
            { "url": "https://b.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0" },
        ] });
        assert_eq!(card_endpoint(&v1), Some(("https://b.example/rpc".into(), "1.0".into())));
        let v03 =
            json!({ "url": "https://c.example/a2a", "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC" });
        assert_eq!(card_endpoint(&v03), Some(("https://c.example/a2a".into(), "0.3".into())));
        let grpc_first = json!({ "url": "https://c.example/grpc", "protocolVersion": "0.3.0", "preferredTransport": "GRPC",
            "additionalInterfaces": [{ "url": "https://c.example/jsonrpc", "transport": "JSONRPC" }] });
        assert_eq!(card_endpoint(&grpc_first), Some(("https://c.example/jsonrpc".into(), "0.3".into())));
        assert_eq!(card_endpoint(&json!({ "name": "no endpoint" })), None);
        assert_eq!(card_endpoint(&json!({ "url": "https://d.example", "protocolVersion": "2.0" })), None);
    }

    #[test]
    fn a_card_is_kept_as_long_as_its_caching_headers_say_within_a_day() {
        assert_eq!(freshness_seconds(None), REMOTE_CARD_DEFAULT_SECONDS);
        assert_eq!(freshness_seconds(Some("public, max-age=60")), 60);
        assert_eq!(freshness_seconds(Some("max-age=0")), 0);
        assert_eq!(freshness_seconds(Some("no-store")), 0);
        assert_eq!(freshness_seconds(Some("max-age=99999999")), REMOTE_CARD_LONGEST_SECONDS);
        assert_eq!(freshness_seconds(Some("max-age=banana")), REMOTE_CARD_DEFAULT_SECONDS);
    }

    #[test]
    fn content_goes_as_the_parts_it_holds_text_or_data_and_comes_back_without_kinds() {
        assert_eq!(parts_of(&json!("hi")), vec![json!({ "text": "hi" })]);
        assert_eq!(parts_of(&json!({ "parts": [{ "text": "a" }] })), vec![json!({ "text": "a" })]);
        assert_eq!(parts_of(&json!({ "n": 1 })), vec![json!({ "data": { "n": 1 } })]);
        let back = stored_parts(Some(
            &json!([{ "kind": "text", "text": "a" }, { "kind": "file", "file": {} }, { "data": { "n": 1 } }]),
        ));
        assert_eq!(back, vec![json!({ "text": "a" }), json!({ "data": { "n": 1 } })]);
    }
}
