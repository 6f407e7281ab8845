//! How big a send's message may be: the Email Service takes at most
//! `OUTBOUND_MESSAGE_BYTES` per message, counted as the message is written (its
//! files in base64), and a file, a submission and an approval that would take
//! it past that are refused (decision 0043).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use mailroom_contract::api::limits::{OUTBOUND_ATTACHMENT_BYTES, OUTBOUND_MESSAGE_BYTES};
use serde_json::{Value, json};

use crate::desk::{Desk, WORKS_THE_MAILBOX};
use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";

/// A writer who drafts, and an approver who decides.
fn desk() -> Desk {
    Desk::new(SUPPORT)
        .with("writer@example.com", WORKS_THE_MAILBOX)
        .with("approver@example.com", &["mailbox.metadata.read", "mailbox.content.read", "approval.decide"])
}

/// A new draft of the writer's: its path.
fn draft(desk: &Desk, note: &str) -> String {
    let created = desk.world.call(
        "POST",
        &desk.sends(),
        Some(&desk.person("writer").token),
        Some(json!({ "to": ["ana@customer.example"], "subject": "The drawings", "text": note })),
    );
    assert_eq!(created.status, 201, "{}", text(&created));
    format!("{}/{}", desk.sends(), body(&created)["id"].as_str().unwrap())
}

/// Attaches `size` bytes to the draft at `send`, as the writer.
fn attach(desk: &Desk, send: &str, name: &str, size: usize) -> mailroom::core::http::Response {
    let bytes: Vec<u8> = (0..size).map(|at| (at % 251) as u8).collect();
    let file = json!({ "name": name, "content_type": "application/pdf", "content_base64": STANDARD.encode(bytes) });
    desk.world.call("POST", &format!("{send}/attachments"), Some(&desk.person("writer").token), Some(file))
}

/// A draft whose message is as close under the limit as a file's size can take
/// it: five of the biggest files, and a sixth of exactly the room the refusal of
/// a bigger one names. The draft's path, and how big that sixth file is.
fn draft_filled_to_the_limit(desk: &Desk, note: &str) -> (String, usize) {
    let send = draft(desk, note);
    for n in 0..5 {
        let attached = attach(desk, &send, &format!("sheet-{n}.pdf"), OUTBOUND_ATTACHMENT_BYTES);
        assert_eq!(attached.status, 201, "{}", text(&attached));
    }
    let too_big = attach(desk, &send, "sheet-5.pdf", OUTBOUND_ATTACHMENT_BYTES);
    assert_refused(&too_big, 409, "message_too_large");
    let fix = body(&too_big)["error"]["fix"].as_str().unwrap().to_string();
    let room: usize = fix
        .strip_prefix("Attach a file of at most ")
        .and_then(|rest| rest.split(' ').next())
        .map(|number| number.replace(',', "").parse().unwrap())
        .unwrap_or_else(|| panic!("the refusal names the room left: {fix}"));
    (send, room)
}

#[test]
fn a_file_that_would_take_the_message_past_the_limit_is_refused_when_attached_naming_the_room_left() {
    let desk = desk();
    let (send, room) = draft_filled_to_the_limit(&desk, "The drawings, as promised.");
    assert!(room > 0 && room < OUTBOUND_ATTACHMENT_BYTES, "{room}");

    // Just over: one byte more than the room is refused, and says why, naming the field.
    let over = attach(&desk, &send, "sheet-5.pdf", room + 1);
    assert_refused(&over, 409, "message_too_large");
    let error = &body(&over)["error"];
    assert!(error["message"].as_str().unwrap().contains("`content_base64`"), "{error}");
    assert!(error["reason"].as_str().unwrap().contains("5,242,880 bytes"), "{error}");
    let unchanged = body(&desk.world.call("GET", &send, Some(&desk.person("writer").token), None));
    assert_eq!(unchanged["attachments"].as_array().unwrap().len(), 5, "nothing attached: {unchanged}");

    // Just under: exactly the room fits.
    let fits = attach(&desk, &send, "sheet-5.pdf", room);
    assert_eq!(fits.status, 201, "{}", text(&fits));
    let counted = desk.world.last_audit_entry()["detail"]["message_size"].as_u64().unwrap() as usize;
    assert!(counted <= OUTBOUND_MESSAGE_BYTES, "{counted}");

    // And what leaves is the message counted, byte for byte.
    let approver = desk.person("approver");
    let submitted = desk.world.call("POST", &format!("{send}/submit"), Some(&desk.person("writer").token), None);
    assert_eq!(submitted.status, 200, "{}", text(&submitted));
    let decision = desk.world.decision(&approver.token, &send);
    let approved = desk.world.call("POST", &format!("{send}/approve"), Some(&approver.token), Some(decision));
    assert_eq!(body(&approved)["state"], "dispatched", "{}", text(&approved));
    let sent = desk.world.node.mailer.sent.borrow();
    assert_eq!(sent[0].raw.len(), counted, "the size counted is the size written");
    assert!(sent[0].raw.len() <= OUTBOUND_MESSAGE_BYTES);
}

#[test]
fn a_draft_whose_text_grew_past_the_room_is_refused_at_submit_until_it_fits() {
    let desk = desk();
    let writer = desk.person("writer");
    let (send, room) = draft_filled_to_the_limit(&desk, "Short.");
    assert_eq!(attach(&desk, &send, "sheet-5.pdf", room).status, 201);
    // A draft may hold more text than fits beside its files while it is written.
    let edit = |text: &str| desk.world.call("PATCH", &send, Some(&writer.token), Some(json!({ "text": text })));
    assert_eq!(edit(&"A longer note about the drawings. ".repeat(100)).status, 200);
    let submitted = desk.world.call("POST", &format!("{send}/submit"), Some(&writer.token), None);
    assert_refused(&submitted, 409, "message_too_large");
    let error = &body(&submitted)["error"];
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("`text`") && message.contains("`attachments`"), "{error}");
    assert!(error["fix"].as_str().unwrap().contains("update_draft"), "{error}");
    assert_eq!(body(&desk.world.call("GET", &send, Some(&writer.token), None))["state"], "draft");
    // Shortened again, it goes.
    assert_eq!(edit("Short.").status, 200);
    let submitted = desk.world.call("POST", &format!("{send}/submit"), Some(&writer.token), None);
    assert_eq!(submitted.status, 200, "{}", text(&submitted));
}

#[test]
fn a_send_whose_message_grew_past_the_limit_after_it_was_submitted_is_not_sealed_or_sent() {
    let desk = desk();
    let (writer, approver) = (desk.person("writer"), desk.person("approver"));
    let (send, room) = draft_filled_to_the_limit(&desk, "The drawings.");
    assert_eq!(attach(&desk, &send, "sheet-5.pdf", room).status, 201);
    assert_eq!(desk.world.call("POST", &format!("{send}/submit"), Some(&writer.token), None).status, 200);
    // The sender's name every message of the mailbox carries grows by more than
    // the few bytes the last file left.
    let renamed = desk.world.admin(
        "PATCH",
        &format!("/api/mailboxes/{}", desk.mailbox),
        Some(json!({ "display_name": "Support and drawings office of the customer service department" })),
    );
    assert_eq!(renamed.status, 200, "{}", text(&renamed));
    let decision = desk.world.decision(&approver.token, &send);
    let approved = desk.world.call("POST", &format!("{send}/approve"), Some(&approver.token), Some(decision));
    assert_refused(&approved, 409, "message_too_large");
    assert!(body(&approved)["error"]["fix"].as_str().unwrap().contains("refuse_send"), "{}", text(&approved));
    let shown: Value = body(&desk.world.call("GET", &send, Some(&approver.token), None));
    assert_eq!(shown["state"], "submitted", "nothing sealed: {shown}");
    assert!(desk.world.node.mailer.sent.borrow().is_empty(), "nothing sent");
}
