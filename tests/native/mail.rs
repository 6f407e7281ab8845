//! Mail: inbound delivery, reading on the metadata/content line, and search.

use mailroom::mail::{Delivery, Rejection};
use serde_json::json;

use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";

fn world_with_mailbox() -> (World, String) {
    let world = World::new();
    let mailbox = world.mailbox(SUPPORT);
    (world, mailbox)
}

/// A person holding exactly `relations` on the mailbox: (id, token).
fn reader(world: &World, email: &str, relations: &[&str], mailbox: &str) -> (String, String) {
    let (id, token) = world.person(email);
    world.grant_all(&id, relations, mailbox);
    (id, token)
}

fn message(world: &World, token: &str, mailbox: &str, receipt: &str, suffix: &str) -> mailroom::core::http::Response {
    world.call("GET", &format!("/api/mailboxes/{mailbox}/messages/{receipt}{suffix}"), Some(token), None)
}

#[test]
fn a_plain_message_is_stored_with_its_headers_and_text() {
    let (world, mailbox) = world_with_mailbox();
    let receipt = world.deliver("plain", SUPPORT);
    let (_, token) = reader(&world, "cy@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    let metadata = body(&message(&world, &token, &mailbox, &receipt, ""));
    assert_eq!(metadata["subject"], "Where is my invoice?");
    assert_eq!(metadata["from"], json!({ "address": "ana@customer.example", "name": "Ana Lima" }));
    assert_eq!(metadata["to"], json!([{ "address": "support@mailroom.test", "name": "Support" }]));
    assert_eq!(metadata["message_id"], "invoice-question-1@customer.example");
    assert_eq!(metadata["sent_at"], "2026-11-27T09:15:00.000Z");
    assert_eq!(metadata["size"], fixture("plain").len());
    assert!(metadata.get("text").is_none(), "metadata never carries the body");
    let text = body(&message(&world, &token, &mailbox, &receipt, "/body"));
    assert!(text["text"].as_str().unwrap().contains("invoice for order 4471"));
    assert_eq!(text["text_source"], "text");
}

/// A sender may put a right-to-left override in anything they write. The node
/// stores and answers it as written (the interface shows it neutralised), but a
/// file it serves is never named with one: a browser would save
/// `report`, U+202E, `fdp.exe` as what reads `reportexe.pdf`.
#[test]
fn a_received_file_is_served_under_a_name_no_direction_control_can_reorder() {
    let (world, mailbox) = world_with_mailbox();
    let receipt = world.deliver("direction-controls", SUPPORT);
    let (_, token) = reader(&world, "cy@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    let metadata = body(&message(&world, &token, &mailbox, &receipt, ""));
    assert_eq!(metadata["subject"], "Statement \u{202E}cod.exe for November", "stored and answered as written");
    assert_eq!(metadata["attachments"][0]["name"], "report\u{202E}fdp.exe");
    let download = message(&world, &token, &mailbox, &receipt, "/attachments/0");
    assert_eq!(download.status, 200);
    assert_eq!(
        download.header("content-disposition"),
        Some("attachment; filename=\"report_fdp.exe\""),
        "the override becomes `_`, so the name reads as the .exe it is"
    );
}

#[test]
fn multipart_mail_lists_its_attachments_and_serves_them_inert() {
    let (world, mailbox) = world_with_mailbox();
    let receipt = world.deliver("multipart-attachment", SUPPORT);
    let (_, token) = reader(&world, "cy@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    let metadata = body(&message(&world, &token, &mailbox, &receipt, ""));
    assert_eq!(
        metadata["attachments"],
        json!([{ "index": 0, "name": "contract.pdf", "content_type": "application/pdf", "size": 78 }])
    );
    assert_eq!(metadata["cc"][0]["address"], "billing@mailroom.test");
    let download = message(&world, &token, &mailbox, &receipt, "/attachments/0");
    assert_eq!(download.status, 200);
    assert_eq!(download.header("content-type"), Some("application/pdf"));
    assert!(download.body.starts_with(b"%PDF-1.4"));
    assert_eq!(download.body.len(), 78);
    assert_eq!(download.header("content-disposition"), Some("attachment; filename=\"contract.pdf\""));
    assert!(download.header("content-security-policy").unwrap().contains("sandbox"));
    assert_refused(&message(&world, &token, &mailbox, &receipt, "/attachments/1"), 404, "not_found");
    let not_a_position = message(&world, &token, &mailbox, &receipt, "/attachments/x");
    assert_refused(&not_a_position, 404, "not_found");
    assert!(text(&not_a_position).contains("a whole number, 0 or more"), "{}", text(&not_a_position));
    assert_refused(&message(&world, &token, &mailbox, &receipt, "/attachments/-1"), 404, "not_found");
}

/// mail-parser 0.11 takes its boundary written anywhere for a delimiter
/// (decision 0042): the text would end at `week or ` and the file at `2. `.
#[test]
fn a_boundary_written_inside_a_line_cuts_nothing_short() {
    let (world, mailbox) = world_with_mailbox();
    let receipt = world.deliver("boundary-in-text", SUPPORT);
    let (_, token) = reader(&world, "cy@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    let text = body(&message(&world, &token, &mailbox, &receipt, "/body"));
    assert_eq!(
        text["text"].as_str().unwrap().replace("\r\n", "\n"),
        "Hello,\n\nWe can meet this week or --next week, whichever suits you.\n\
         --nextcloud holds the plans; the agenda is attached.\n\nAna"
    );
    let metadata = body(&message(&world, &token, &mailbox, &receipt, ""));
    assert_eq!(metadata["attachments"][0]["name"], "agenda.txt");
    let download = message(&world, &token, &mailbox, &receipt, "/attachments/0");
    assert_eq!(download.body, b"1. Site tour\r\n2. --next steps");
    assert_eq!(metadata["size"], fixture("boundary-in-text").len(), "the original is stored as it came");
}

#[test]
fn html_only_mail_is_read_as_text_and_never_as_markup() {
    let (world, mailbox) = world_with_mailbox();
    let receipt = world.deliver("html-only", SUPPORT);
    let (_, token) = reader(&world, "cy@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    let text = body(&message(&world, &token, &mailbox, &receipt, "/body"));
    assert_eq!(text["text_source"], "html");
    assert!(text.get("html").is_none(), "the HTML only when asked for: {text}");
    let text = text["text"].as_str().unwrap();
    assert_eq!(text, "Quarterly update\n\nRevenue grew by twelve percent.", "its paragraphs kept, its script dropped");
}

#[test]
fn a_message_s_html_is_handed_out_as_sent_only_when_asked_for() {
    let (world, mailbox) = world_with_mailbox();
    let html_only = world.deliver("html-only", SUPPORT);
    let plain = world.deliver("plain", SUPPORT);
    let (_, token) = reader(&world, "cy@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    let asked = body(&message(&world, &token, &mailbox, &html_only, "/body?html=true"));
    let html = asked["html"].as_str().unwrap();
    assert!(html.starts_with("<html><body><h1>Quarterly update</h1>"), "{html}");
    assert!(html.contains("<script>"), "as sent: the reader sanitises it");
    assert_eq!(asked["html_truncated"], false);
    assert_eq!(asked["text"], "Quarterly update\n\nRevenue grew by twelve percent.");
    let none = body(&message(&world, &token, &mailbox, &plain, "/body?html=true"));
    assert!(none.get("html").is_none() && none.get("html_truncated").is_none(), "a text message has no HTML: {none}");
    assert_refused(&message(&world, &token, &mailbox, &html_only, "/body?html=yes"), 400, "invalid_query_parameter");
}

#[test]
fn non_utf8_charsets_and_encoded_words_are_decoded() {
    let (world, mailbox) = world_with_mailbox();
    let latin = world.deliver("latin1", SUPPORT);
    let encoded = world.deliver("encoded-headers", SUPPORT);
    let (_, token) = reader(&world, "cy@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    let metadata = body(&message(&world, &token, &mailbox, &latin, ""));
    assert_eq!(metadata["subject"], "Confirmación de pedido");
    assert_eq!(metadata["from"]["name"], "José García");
    let text = body(&message(&world, &token, &mailbox, &latin, "/body"));
    assert!(text["text"].as_str().unwrap().contains("El pedido está confirmado. Señor García"));
    let metadata = body(&message(&world, &token, &mailbox, &encoded, ""));
    assert_eq!(metadata["subject"], "Вопрос по счёту — urgent");
    assert_eq!(metadata["from"]["name"], "Мария Иванова");
    assert_eq!(metadata["to"][0]["name"], "Süpport Team");
    let text = body(&message(&world, &token, &mailbox, &encoded, "/body"));
    assert!(text["text"].as_str().unwrap().starts_with("Добрый день!"));
}

#[test]
fn a_reply_to_header_says_where_replies_go() {
    let (world, mailbox) = world_with_mailbox();
    let ticket = world.deliver("reply-to", SUPPORT);
    let plain = world.deliver("plain", SUPPORT);
    let (_, token) = reader(&world, "cy@example.com", &["mailbox.metadata.read"], &mailbox);
    let metadata = body(&message(&world, &token, &mailbox, &ticket, ""));
    assert_eq!(metadata["reply_to"], json!([{ "address": "queue+4471@tickets.example", "name": "Support Queue" }]));
    assert_eq!(body(&message(&world, &token, &mailbox, &plain, ""))["reply_to"], json!([]));
}

#[test]
fn multibyte_charsets_are_decoded_too() {
    // Each decoded for real: in the Worker the runtime's TextDecoder does it,
    // natively encoding_rs 0.7 (decision 0025); tests/e2e/mail.test.mjs sends
    // the same fixtures through workerd.
    let (world, mailbox) = world_with_mailbox();
    let (_, token) = reader(&world, "cy@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    let check = |fixture: &str, subject: &str, sender: &str, text: &str| {
        let receipt = world.deliver(fixture, SUPPORT);
        let metadata = body(&message(&world, &token, &mailbox, &receipt, ""));
        assert_eq!((metadata["subject"].as_str(), metadata["from"]["name"].as_str()), (Some(subject), Some(sender)));
        let body = body(&message(&world, &token, &mailbox, &receipt, "/body"));
        assert_eq!(body["text"].as_str().map(str::trim_end), Some(text), "{fixture}");
    };
    check("iso-2022-jp", "会議の確認", "山田太郎", "明日の会議は午後三時からです。よろしくお願いします。");
    check("shift-jis", "請求書の送付について", "鈴木花子", "今月分の請求書を添付いたします。ご確認ください。");
    check("gb18030", "发货时间确认", "王小明", "您好，请确认订单的发货时间。谢谢！");
    check("big5", "會議時間變更", "陳大文", "明天的會議改到下午四點。");
}

#[test]
fn mail_nobody_should_keep_is_rejected_with_an_smtp_reason_and_stored_nowhere() {
    let (world, _) = world_with_mailbox();
    let unknown = world.node.deliver("x@outside.example", "nobody@mailroom.test", &fixture("plain"));
    assert_eq!(unknown, Err(Rejection::UnknownRecipient { address: "nobody@mailroom.test".into() }));
    assert!(unknown.unwrap_err().smtp_reason().starts_with("550 5.1.1"));

    let mut huge = fixture("plain");
    huge.extend(std::iter::repeat_n(b'x', world.node.config.maximum_message_bytes));
    let too_large = world.node.deliver("x@outside.example", SUPPORT, &huge);
    assert!(matches!(too_large, Err(Rejection::TooLarge { .. })));
    assert!(too_large.unwrap_err().smtp_reason().starts_with("552"));

    let garbage = world.node.deliver("x@outside.example", SUPPORT, &[0xff, 0xfe, 0x00, 0x01, 0x02]);
    assert_eq!(garbage, Err(Rejection::Unparseable));

    assert_eq!(world.node.mail_count("SELECT COUNT(*) FROM receipts"), 0);
    assert!(world.node.blobs.objects.borrow().is_empty(), "no bytes kept for a rejected message");
}

#[test]
fn the_same_message_id_twice_is_stored_once_and_two_mailboxes_get_one_receipt_each() {
    let (world, support) = world_with_mailbox();
    let billing_mailbox = world.mailbox("billing@mailroom.test");
    let first = world.deliver("multipart-attachment", SUPPORT);
    let again = world.node.deliver("x@outside.example", SUPPORT, &fixture("multipart-attachment"));
    assert_eq!(again, Ok(Delivery::Duplicate { receipt_id: first.clone() }));
    let billing = world.deliver("multipart-attachment", "Billing@Mailroom.test");
    assert_ne!(first, billing);
    assert_eq!(world.node.mail_count("SELECT COUNT(*) FROM receipts"), 2);
    let keys: Vec<String> = world.node.blobs.objects.borrow().keys().cloned().collect();
    assert_eq!(keys.len(), 2, "the bytes are stored once per mailbox, not again for the re-delivery: {keys:?}");
    for mailbox in [&support, &billing_mailbox] {
        let prefix = format!("raw/{mailbox}/");
        assert!(keys.iter().any(|key| key.starts_with(&prefix)), "each under its mailbox's key: {keys:?}");
    }
    let deliveries: Vec<_> = world.audit().into_iter().filter(|entry| entry["action"] == "receive_mail").collect();
    assert_eq!(deliveries.len(), 3, "each stored receipt is recorded, and so is the delivery not stored again");
    let again = deliveries.iter().find(|entry| entry["detail"]["delivered_again"] == true).unwrap();
    assert_eq!(again["object"], first.as_str(), "{again}");
    assert_eq!(world.verify()["intact"], true);
}

/// A message from Ana with Message-ID `<reused@customer.example>`, as Email
/// Routing hands it over: its own trace on top (`received_at` differs between
/// two deliveries), then `stamp`, then what the sender wrote.
fn claiming_the_id(received_at: &str, stamp: &str, body: &str) -> Vec<u8> {
    format!(
        "Received: from mail.customer.example by mx.cloudflare.net; {received_at}\r\n{stamp}\
         From: Ana Lima <ana@customer.example>\r\nTo: Support <{SUPPORT}>\r\nSubject: Invoice 4471\r\n\
         Message-ID: <reused@customer.example>\r\nDate: Mon, 16 Nov 2026 09:00:00 +0000\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

#[test]
fn a_message_id_is_a_claim_another_message_making_it_is_kept_and_marked_and_nothing_goes_unrecorded() {
    let (world, mailbox) = world_with_mailbox();
    let (_, token) =
        reader(&world, "cy@example.com", &["mailbox.metadata.read", "mailbox.content.read", "send.propose"], &mailbox);
    let deliver = |raw: Vec<u8>| world.node.deliver("ana@customer.example", SUPPORT, &raw);
    let stored = |raw: Vec<u8>| match deliver(raw) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{other:?}"),
    };
    let first = stored(claiming_the_id("Mon, 16 Nov 2026 09:00:01 +0000", "", "Where is the invoice?"));
    // The sender's server delivers it again: a new trace on top, the same message.
    let again = deliver(claiming_the_id("Mon, 16 Nov 2026 09:05:00 +0000", "", "Where is the invoice?"));
    assert_eq!(again, Ok(Delivery::Duplicate { receipt_id: first.clone() }));
    // Someone else's message claiming that id, with other words: kept, not dropped.
    let other = stored(claiming_the_id("Mon, 16 Nov 2026 09:10:00 +0000", "", "Pay into account 1234 instead."));
    assert_ne!(other, first);
    assert_eq!(
        deliver(claiming_the_id("Mon, 16 Nov 2026 09:11:00 +0000", "", "Pay into account 1234 instead.")),
        Ok(Delivery::Duplicate { receipt_id: other.clone() }),
        "and it too is recognised when it comes again"
    );
    // The same words with another verdict on the sender are another message too.
    let stamp = "Authentication-Results: mx.cloudflare.net; dkim=pass header.d=customer.example; \
         dmarc=pass header.from=customer.example; spf=pass smtp.mailfrom=ana@customer.example\r\n";
    let vouched = stored(claiming_the_id("Mon, 16 Nov 2026 09:12:00 +0000", stamp, "Where is the invoice?"));
    assert_eq!(world.node.mail_count("SELECT COUNT(*) FROM receipts"), 3);

    // Each shows the id it claimed; the later ones are marked as reusing it.
    let shown = |receipt: &str| body(&message(&world, &token, &mailbox, receipt, ""));
    assert!(shown(&first).get("message_id_reused").is_none(), "{}", shown(&first));
    for receipt in [&other, &vouched] {
        let message = shown(receipt);
        assert_eq!(message["message_id"], "reused@customer.example", "{message}");
        assert_eq!(message["message_id_reused"], true, "{message}");
    }
    assert_eq!(shown(&vouched)["authentication"]["sender"], "authenticated");
    let thread = body(&world.call("GET", &world.thread_of(&mailbox, &other), Some(&token), None));
    let marked: Vec<_> = thread["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["received"]["message_id_reused"] == true)
        .map(|entry| entry["received"]["id"].as_str().unwrap().to_string())
        .collect();
    assert!(marked.contains(&other), "marked in its conversation too: {thread}");
    // A reply to it names the id it carried, never the key it is kept under.
    let draft = body(&world.call(
        "POST",
        &format!("/api/mailboxes/{mailbox}/sends"),
        Some(&token),
        Some(json!({ "reply_to": other, "text": "Which account?" })),
    ));
    assert_eq!(draft["in_reply_to"], "reused@customer.example", "{draft}");

    // Nothing arrived unrecorded: five deliveries, five entries, each naming its receipt.
    let entries: Vec<_> = world.audit().into_iter().filter(|entry| entry["action"] == "receive_mail").collect();
    assert_eq!(entries.len(), 5, "{entries:?}");
    let stored_over = entries.iter().find(|entry| entry["object"] == other.as_str()).unwrap();
    assert_eq!(stored_over["detail"]["message_id_reused_from"], first.as_str(), "{stored_over}");
    assert_eq!(entries.iter().filter(|entry| entry["detail"]["delivered_again"] == true).count(), 2);
    assert_eq!(world.verify()["intact"], true);
}

#[test]
fn metadata_holders_see_that_mail_exists_and_never_its_content() {
    let (world, mailbox) = world_with_mailbox();
    let receipt = world.deliver("multipart-attachment", SUPPORT);
    let (_, token) = reader(&world, "meta@example.com", &["mailbox.metadata.read"], &mailbox);
    let listed = body(&world.call("GET", &format!("/api/mailboxes/{mailbox}/messages"), Some(&token), None));
    assert_eq!(listed["messages"][0]["id"], receipt);
    assert_eq!(message(&world, &token, &mailbox, &receipt, "").status, 200);
    let refused = message(&world, &token, &mailbox, &receipt, "/body");
    assert_refused(&refused, 403, "missing_relation");
    assert!(text(&refused).contains("mailbox.content.read"), "the refusal names what is missing");
    assert_refused(&message(&world, &token, &mailbox, &receipt, "/attachments/0"), 403, "missing_relation");
    assert_refused(&message(&world, &token, &mailbox, &receipt, "/original"), 403, "missing_relation");
}

#[test]
fn the_original_needs_content_and_export_together() {
    let (world, mailbox) = world_with_mailbox();
    let receipt = world.deliver("plain", SUPPORT);
    let (_, content_only) =
        reader(&world, "content@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    let refused = message(&world, &content_only, &mailbox, &receipt, "/original");
    assert_refused(&refused, 403, "missing_relation");
    assert!(text(&refused).contains("message.export"));
    let (_, exporter) = reader(
        &world,
        "export@example.com",
        &["mailbox.metadata.read", "mailbox.content.read", "message.export"],
        &mailbox,
    );
    let original = message(&world, &exporter, &mailbox, &receipt, "/original");
    assert_eq!(original.status, 200);
    assert_eq!(original.header("content-type"), Some("message/rfc822"));
    assert_eq!(original.body, fixture("plain"), "byte for byte");
}

#[test]
fn a_mailbox_the_caller_holds_nothing_on_answers_like_one_that_does_not_exist() {
    let (world, mailbox) = world_with_mailbox();
    let receipt = world.deliver("plain", SUPPORT);
    let (_, stranger) = world.person("stranger@example.com");
    let hidden = world.call("GET", &format!("/api/mailboxes/{mailbox}/messages"), Some(&stranger), None);
    let missing = world.call("GET", "/api/mailboxes/mbx_00000000000000000000000000/messages", Some(&stranger), None);
    assert_refused(&hidden, 404, "not_found");
    assert_eq!(hidden.status, missing.status);
    assert_eq!(
        body(&hidden)["error"]["reason"],
        body(&missing)["error"]["reason"],
        "nothing in the answer tells the two apart"
    );
    assert_refused(&message(&world, &stranger, &mailbox, &receipt, "/body"), 404, "not_found");

    // A message of another mailbox, asked for through this one, is not here.
    let other = world.mailbox("billing@mailroom.test");
    let (_, token) = reader(&world, "cy@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &other);
    assert_refused(&message(&world, &token, &other, &receipt, ""), 404, "not_found");
}

#[test]
fn team_relations_reach_mail_and_leaving_the_team_withdraws_them() {
    let (world, mailbox) = world_with_mailbox();
    let receipt = world.deliver("plain", SUPPORT);
    let (cy, token) = world.person("cy@example.com");
    let team = world.team("Support desk");
    world.grant_all(&format!("{team}#member"), &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    world.admin("PUT", &format!("/api/teams/{team}/members/{cy}"), None);
    assert_eq!(message(&world, &token, &mailbox, &receipt, "/body").status, 200);
    world.admin("DELETE", &format!("/api/teams/{team}/members/{cy}"), None);
    assert_refused(&message(&world, &token, &mailbox, &receipt, "/body"), 404, "not_found");
}

#[test]
fn messages_page_newest_first_with_an_opaque_cursor() {
    let (world, mailbox) = world_with_mailbox();
    let names = ["plain", "multipart-attachment", "html-only", "latin1", "encoded-headers", "reply"];
    let receipts: Vec<String> = names.iter().map(|name| world.deliver(name, SUPPORT)).collect();
    let (_, token) = reader(&world, "meta@example.com", &["mailbox.metadata.read"], &mailbox);
    let mut seen = Vec::new();
    let mut path = format!("/api/mailboxes/{mailbox}/messages?limit=4");
    loop {
        let page = body(&world.call("GET", &path, Some(&token), None));
        seen.extend(
            page["messages"].as_array().unwrap().iter().map(|message| message["id"].as_str().unwrap().to_string()),
        );
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/api/mailboxes/{mailbox}/messages?limit=4&cursor={cursor}"),
            None => break,
        }
    }
    let mut newest_first = receipts.clone();
    newest_first.reverse();
    assert_eq!(seen, newest_first);
    let bad = world.call("GET", &format!("/api/mailboxes/{mailbox}/messages?cursor=forged"), Some(&token), None);
    assert_refused(&bad, 400, "invalid_query_parameter");
    let bad = world.call("GET", &format!("/api/mailboxes/{mailbox}/messages?limit=101"), Some(&token), None);
    assert_refused(&bad, 400, "invalid_query_parameter");
}

#[test]
fn reading_content_is_recorded_in_the_audit_chain_and_reading_metadata_is_not() {
    let (world, mailbox) = world_with_mailbox();
    let receipt = world.deliver("plain", SUPPORT);
    let (cy, token) = reader(&world, "cy@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    let before = world.audit().len();
    message(&world, &token, &mailbox, &receipt, "");
    assert_eq!(world.audit().len(), before, "metadata reads leave no trace");
    message(&world, &token, &mailbox, &receipt, "/body");
    let entry = world.last_audit_entry();
    assert_eq!(entry["action"], "get_message_body");
    assert_eq!(entry["actor"], cy);
    assert_eq!(entry["object"], receipt);
    assert_eq!(entry["outcome"], "ok");
}

#[test]
fn the_readable_listing_and_the_work_queue_answer_different_questions() {
    let (world, mailbox) = world_with_mailbox();
    let billing = world.mailbox("billing@mailroom.test");
    let (cy, token) = world.person("cy@example.com");
    world.grant_all(&cy, &["mailbox.metadata.read"], &mailbox);
    world.grant_all(&cy, &["send.propose"], &billing);
    let readable = body(&world.call("GET", "/api/mailboxes/readable", Some(&token), None));
    assert_eq!(readable["mailboxes"].as_array().unwrap().len(), 1);
    assert_eq!(readable["mailboxes"][0]["id"], mailbox);
    assert_eq!(readable["mailboxes"][0]["held"], json!(["mailbox.metadata.read"]));
    let queue = body(&world.call("GET", "/api/mailboxes", Some(&token), None));
    assert_eq!(queue["mailboxes"].as_array().unwrap().len(), 1);
    assert_eq!(queue["mailboxes"][0]["id"], billing);
    let all = body(&world.admin("GET", "/api/mailboxes/all", None));
    assert_eq!(all["mailboxes"].as_array().unwrap().len(), 2);
}

#[test]
fn administrators_create_and_rename_mailboxes() {
    let (world, mailbox) = world_with_mailbox();
    assert_refused(
        &world.admin(
            "POST",
            "/api/mailboxes",
            Some(json!({ "address": "SUPPORT@mailroom.test", "display_name": "x" })),
        ),
        409,
        "address_taken",
    );
    assert_refused(
        &world.admin("POST", "/api/mailboxes", Some(json!({ "address": "not an address", "display_name": "x" }))),
        400,
        "invalid_address",
    );
    world.grant_all(&world.admin_id, &["mailbox.metadata.read"], &mailbox);
    let renamed =
        world.admin("PATCH", &format!("/api/mailboxes/{mailbox}"), Some(json!({ "display_name": "Help desk" })));
    assert_eq!(body(&renamed)["display_name"], "Help desk");
    assert_eq!(body(&renamed)["held"], json!(["mailbox.metadata.read"]), "the answer says what the caller holds");
    assert!(body(&renamed)["tools"].as_array().unwrap().iter().any(|tool| tool == "list_messages"));
    let (_, token) = world.person("cy@example.com");
    let attempt =
        world.call("POST", "/api/mailboxes", Some(&token), Some(json!({ "address": "x@y.z", "display_name": "x" })));
    assert_refused(&attempt, 403, "missing_relation");
    // Relations on mailboxes are granted through the one door.
    assert_eq!(world.grant(&world.admin_id, "mailbox.content.read", &mailbox).status, 201);
}

#[test]
fn search_finds_headers_where_metadata_is_read_and_bodies_only_where_content_is() {
    let (world, mailbox) = world_with_mailbox();
    let plain = world.deliver("plain", SUPPORT);
    world.deliver("latin1", SUPPORT);
    let (_, meta) = reader(&world, "meta@example.com", &["mailbox.metadata.read"], &mailbox);
    let (_, content) =
        reader(&world, "content@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    let search = |token: &str, q: &str| body(&world.call("GET", &format!("/api/search?q={q}"), Some(token), None));

    // "invoice" is in the subject: both arms' callers find it.
    assert_eq!(search(&meta, "invoice")["results"][0]["id"], plain);
    assert_eq!(search(&meta, "invoice")["results"][0]["matched_in"], "headers");

    // "4471" is only in the body: the metadata reader finds nothing at all.
    assert_eq!(search(&meta, "4471")["results"], json!([]));
    let found = search(&content, "4471");
    assert_eq!(found["results"][0]["id"], plain);
    assert_eq!(found["results"][0]["matched_in"], "body");
    assert!(found["results"][0]["snippet"].as_str().unwrap().contains("[4471]"));

    // Diacritics fold, prefixes work, a message matched in both arms comes once.
    assert_eq!(search(&content, "senor")["results"].as_array().unwrap().len(), 1);
    assert_eq!(search(&content, "confirm*")["results"].as_array().unwrap().len(), 1);
    assert_eq!(search(&content, "invoice")["results"].as_array().unwrap().len(), 1);

    let (_, nobody) = world.person("nobody@example.com");
    assert_eq!(search(&nobody, "invoice")["results"], json!([]));
}

/// A small message to `to` with its own Message-ID, `subject` and `text`.
fn deliver_note(world: &World, to: &str, number: usize, subject: &str, text: &str) -> String {
    let raw = format!(
        "From: Ana Lima <ana@customer.example>\r\nTo: {to}\r\nSubject: {subject}\r\n\
         Message-ID: <note-{number}@customer.example>\r\nDate: Fri, 27 Nov 2026 09:15:00 +0000\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n"
    );
    match world.node.deliver("ana@customer.example", to, raw.as_bytes()) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("delivering note {number}: {other:?}"),
    }
}

/// Every result of a search, following `next_cursor` page by page (a cursor that
/// went nowhere would never end, so ten pages are the most there may be).
fn search_all(world: &World, token: &str, path: &str) -> Vec<(String, String)> {
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let page_path = match &cursor {
            Some(cursor) => format!("{path}&cursor={cursor}"),
            None => path.to_string(),
        };
        let page = body(&world.call("GET", &page_path, Some(token), None));
        let results = page["results"].as_array().unwrap();
        assert!(results.len() <= 2, "a page holds at most its limit");
        seen.extend(
            results
                .iter()
                .map(|hit| (hit["id"].as_str().unwrap().to_string(), hit["matched_in"].as_str().unwrap().to_string())),
        );
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return seen,
        }
    }
    panic!("{path} went on for more than ten pages: {seen:?}");
}

#[test]
fn search_pages_with_a_cursor_across_both_arms_and_can_keep_to_one_mailbox() {
    let (world, support) = world_with_mailbox();
    let billing = world.mailbox("billing@mailroom.test");
    // The word is in the subject, the body, both, or (note 4) neither, so a page's
    // hits come from both arms; and three are in subjects alone, so a reader of
    // metadata pages through one arm.
    let notes = [
        (SUPPORT, "Refund please", "Nothing else."),
        (SUPPORT, "A question", "About my refund."),
        ("billing@mailroom.test", "Refund for order 7", "Thanks."),
        (SUPPORT, "Refund again", "Still no refund."),
        (SUPPORT, "Hello", "Just saying hello."),
        (SUPPORT, "Another", "The refund arrived."),
        (SUPPORT, "Refund status", "Any news?"),
    ];
    let receipts: Vec<String> = notes
        .iter()
        .enumerate()
        .map(|(number, (to, subject, text))| deliver_note(&world, to, number, subject, text))
        .collect();
    let newest_first = |indexes: &[usize], arms: &[&str]| -> Vec<(String, String)> {
        indexes.iter().rev().zip(arms.iter().rev()).map(|(&i, arm)| (receipts[i].clone(), arm.to_string())).collect()
    };
    let (cy, content) =
        reader(&world, "content@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &support);
    world.grant_all(&cy, &["mailbox.metadata.read", "mailbox.content.read"], &billing);
    let (_, meta) = reader(&world, "meta@example.com", &["mailbox.metadata.read"], &support);

    assert_eq!(
        search_all(&world, &content, "/api/search?q=refund&limit=2"),
        newest_first(&[0, 1, 2, 3, 5, 6], &["headers", "body", "headers", "body", "body", "headers"]),
        "every match once, newest first, a body match winning over a header match"
    );
    assert_eq!(
        search_all(&world, &content, &format!("/api/search?q=refund&limit=2&mailbox={support}")),
        newest_first(&[0, 1, 3, 5, 6], &["headers", "body", "body", "body", "headers"]),
    );
    assert_eq!(
        search_all(&world, &content, &format!("/api/search?q=refund&limit=2&mailbox={billing}")),
        newest_first(&[2], &["headers"]),
    );
    // The metadata reader finds subjects alone, and nothing in a mailbox they cannot read.
    assert_eq!(
        search_all(&world, &meta, "/api/search?q=refund&limit=2"),
        newest_first(&[0, 3, 6], &["headers", "headers", "headers"]),
        "three pages' worth from one arm alone, none lost at a page's edge"
    );
    assert_eq!(search_all(&world, &meta, &format!("/api/search?q=refund&limit=2&mailbox={billing}")), vec![]);

    for bad in ["&mailbox=support", "&mailbox=", "&cursor=forged"] {
        let response = world.call("GET", &format!("/api/search?q=refund{bad}"), Some(&content), None);
        assert_refused(&response, 400, "invalid_query_parameter");
    }
}

#[test]
fn search_syntax_is_refused_by_our_rules_and_never_reaches_the_database_as_syntax() {
    let (world, mailbox) = world_with_mailbox();
    world.deliver("plain", SUPPORT);
    let (_, content) =
        reader(&world, "content@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    let search = |q: &str| world.call("GET", &format!("/api/search?q={q}"), Some(&content), None);
    assert_refused(&search("%22unclosed"), 400, "unclosed_quote");
    assert_refused(&search("%20%20"), 400, "empty_query");
    assert_refused(&world.call("GET", "/api/search", Some(&content), None), 400, "missing_query_parameter");
    assert_refused(&search("*"), 400, "empty_query");
    assert_refused(&search("%00"), 400, "empty_query");
    assert_refused(&search("%01%1F%7F"), 400, "empty_query");
    for hostile in [
        "NEAR(a%20b)",
        "a%20OR%20b",
        "c%3Ad",
        "%5Ee",
        "a*b",
        "a%22b%22c",
        "AND",
        "-invoice",
        "invoice)",
        "a%00b",
        "invoice%00%22x%22",
        "in%E2%80%8Bvoice",
    ] {
        let response = search(hostile);
        assert_eq!(response.status, 200, "{hostile}: {}", text(&response));
    }
    assert!(world.node.platform.logs.borrow().is_empty(), "{:?}", world.node.platform.logs.borrow());
}

/// What SQLite did for the statements of one call whose SQL contains `marks`:
/// virtual machine steps (which grow with every row visited) and sorts, with the
/// answer's body.
fn cost_of(world: &World, token: &str, path: &str, marks: &str) -> (i32, i32, serde_json::Value) {
    world.node.database.take_costs();
    let answer = body(&world.call("GET", path, Some(token), None));
    let costs: Vec<_> = world.node.database.take_costs().into_iter().filter(|cost| cost.sql.contains(marks)).collect();
    assert!(!costs.is_empty(), "{path} ran no statement containing {marks:?}");
    (costs.iter().map(|cost| cost.steps).sum(), costs.iter().map(|cost| cost.sorts).sum(), answer)
}

/// The path of page `page` (1 is the first) of `path`, following `next_cursor`.
fn page_path(world: &World, token: &str, path: &str, page: usize) -> String {
    let mut current = path.to_string();
    for _ in 1..page {
        let next = body(&world.call("GET", &current, Some(token), None))["next_cursor"].as_str().unwrap().to_string();
        current = format!("{path}&cursor={next}");
    }
    current
}

#[test]
fn a_page_of_a_search_or_of_the_list_costs_the_same_however_much_mail_there_is() {
    let (world, support) = world_with_mailbox();
    let (_, content) =
        reader(&world, "content@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &support);
    // "invoice" is in every message's subject and text: every message matches both arms.
    let mut delivered = 0;
    let mut deliver_up_to = |count: usize| {
        while delivered < count {
            deliver_note(&world, SUPPORT, delivered, &format!("Invoice {delivered}"), "About the invoice.");
            delivered += 1;
        }
    };
    let search = "/api/search?q=invoice&limit=5";
    let list = format!("/api/mailboxes/{support}/messages?limit=5");
    let measure = || {
        let first_search = cost_of(&world, &content, search, " MATCH ");
        let later_search = cost_of(&world, &content, &page_path(&world, &content, search, 4), " MATCH ");
        let first_list = cost_of(&world, &content, &list, "FROM receipts r WHERE r.mailbox_id");
        let later_list =
            cost_of(&world, &content, &page_path(&world, &content, &list, 4), "FROM receipts r WHERE r.mailbox_id");
        for (steps, sorts, answer) in [&first_search, &later_search, &first_list, &later_list] {
            assert_eq!(*sorts, 0, "nothing is sorted: {steps} steps for {answer}");
        }
        [first_search.0, later_search.0, first_list.0, later_list.0]
    };
    deliver_up_to(40);
    let small = measure();
    deliver_up_to(400);
    let large = measure();
    for ((small, large), what) in
        small.iter().zip(large).zip(["first search page", "fourth search page", "first list page", "fourth list page"])
    {
        assert!(large <= small + small / 10, "{what}: {small} steps at 40 messages, {large} at 400");
    }
}

#[test]
fn mail_is_newest_first_in_the_order_it_was_stored_even_when_the_clock_says_otherwise() {
    let (world, support) = world_with_mailbox();
    let (_, content) =
        reader(&world, "content@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &support);
    let first = deliver_note(&world, SUPPORT, 1, "Refund one", "Stored first.");
    // A delivery whose Worker read an earlier time (another machine's clock, or
    // a slower store of its bytes) is still stored after the first.
    world.node.platform.advance(-60_000);
    let second = deliver_note(&world, SUPPORT, 2, "Refund two", "Stored second.");
    let listed = body(&world.call("GET", &format!("/api/mailboxes/{support}/messages"), Some(&content), None));
    let found = body(&world.call("GET", "/api/search?q=refund", Some(&content), None));
    for (answer, items) in [(&listed, "messages"), (&found, "results")] {
        let items = answer[items].as_array().unwrap();
        let ids: Vec<&str> = items.iter().map(|item| item["id"].as_str().unwrap()).collect();
        assert_eq!(ids, [second.as_str(), first.as_str()], "{answer}");
        assert_eq!(
            items[0]["received_at"], items[1]["received_at"],
            "the later-stored is never shown as received earlier"
        );
    }
}

#[test]
fn a_reader_of_one_small_mailbox_does_not_pay_for_the_rest_of_the_node() {
    let (world, support) = world_with_mailbox();
    world.mailbox("billing@mailroom.test");
    let (_, content) =
        reader(&world, "content@example.com", &["mailbox.metadata.read", "mailbox.content.read"], &support);
    let mine = [
        deliver_note(&world, SUPPORT, 0, "Refund please", "About my refund."),
        deliver_note(&world, SUPPORT, 1, "Refund again", "Still no refund."),
    ];
    // The rest of the node's mail, which this reader cannot see, matches both
    // words: "refund" often, and "invoice" (in none of the reader's mail) always.
    let mut delivered = 2;
    let mut deliver_up_to = |count: usize| {
        while delivered < count {
            deliver_note(&world, "billing@mailroom.test", delivered, &format!("Invoice {delivered}"), "Refund owed.");
            delivered += 1;
        }
    };
    let ids = |answer: &serde_json::Value| -> Vec<String> {
        answer["results"].as_array().unwrap().iter().map(|hit| hit["id"].as_str().unwrap().to_string()).collect()
    };
    let measure = || {
        let (refund, _, found) = cost_of(&world, &content, "/api/search?q=refund&limit=5", " MATCH ");
        assert_eq!(ids(&found), [mine[1].clone(), mine[0].clone()], "the reader's own mail, and nothing else");
        let (invoice, _, found) = cost_of(&world, &content, "/api/search?q=invoice&limit=5", " MATCH ");
        assert_eq!(ids(&found), Vec::<String>::new());
        let (scoped, _, found) =
            cost_of(&world, &content, &format!("/api/search?q=refund&limit=5&mailbox={support}"), " MATCH ");
        assert_eq!(ids(&found).len(), 2);
        [refund, invoice, scoped]
    };
    deliver_up_to(40);
    // The indexes hold each message's mailbox, but the caller's words are never
    // matched against it.
    let ulid = support.strip_prefix("mbx_").unwrap();
    for q in ["mbx", ulid, &support] {
        let found = body(&world.call("GET", &format!("/api/search?q={q}"), Some(&content), None));
        assert_eq!(found["results"], json!([]), "{q}");
    }
    let small = measure();
    deliver_up_to(400);
    let large = measure();
    for ((small, large), what) in small.iter().zip(large).zip([
        "refund",
        "invoice, which only others' mail has",
        "refund in the reader's mailbox",
    ]) {
        assert!(large <= small + small / 10, "{what}: {small} steps beside 40 messages of others, {large} beside 400");
    }
}
