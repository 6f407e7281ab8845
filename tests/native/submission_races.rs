//! Changes of one send raced against each other (decision 0016): a
//! submission against an edit of the draft (a version names exactly what the
//! send keeps, whichever commits first), and an approval against another
//! decision or the send taken back (one wins, the other is refused as raced,
//! and the message leaves at most once); whether the mailbox's mail is in D1
//! or in its own database, where the guards ride the mailbox's batch.

use mailroom::testing::{RequestExt, request};
use serde_json::json;

use crate::desk::{Desk, WORKS_THE_MAILBOX};
use crate::support::*;

/// Dual control's next move: change a draft while it is being submitted, so
/// the version the approver is shown names other words or files than the send
/// keeps, and approving it seals what nobody saw. An edit, a file removed or a
/// file added racing the submission (each reading the draft before the other
/// writes, in either order) leaves one of the two refused, and the send's
/// words and files exactly those of the version it holds.
#[test]
fn a_draft_changed_while_it_is_submitted_never_leaves_its_version_naming_other_words_or_files() {
    drafts_changed_while_they_are_submitted(false);
}

/// The same races where the mailbox's mail is in its own database, whose batch
/// carries the guard (decision 0040).
#[test]
fn a_draft_changed_while_it_is_submitted_in_a_moved_mailbox_never_leaves_naming_other_words_or_files() {
    drafts_changed_while_they_are_submitted(true);
}

fn drafts_changed_while_they_are_submitted(moved: bool) {
    let desk = Desk::new("support@mailroom.test").with("writer@example.com", WORKS_THE_MAILBOX);
    let (world, sends, token) = (&desk.world, desk.sends(), &desk.person("writer").token);
    if moved {
        crate::moving_mail::moved(world, &desk.mailbox);
    }
    let version_of = |id: &str| {
        let asked = format!("SELECT submission_json FROM send_versions WHERE send_id = '{id}'");
        match moved {
            true => world.node.mailboxes.database(&desk.mailbox).expect("its own database").database.peek(&asked),
            false => world.node.mail_peek(&asked),
        }
    };
    let file = |name: &str| json!({ "name": name, "content_type": "application/pdf", "content_base64": "JVBERi0=" });
    let draft_with_two_files = || {
        let draft = world.call(
            "POST",
            &sends,
            Some(token),
            Some(json!({ "to": ["ana@customer.example"], "subject": "The contract", "text": "Attached." })),
        );
        assert_eq!(draft.status, 201, "{}", text(&draft));
        let send = format!("{sends}/{}", body(&draft)["id"].as_str().unwrap());
        for name in ["contract.pdf", "annex.pdf"] {
            let added = world.call("POST", &format!("{send}/attachments"), Some(token), Some(file(name)));
            assert_eq!(added.status, 201, "{}", text(&added));
        }
        send
    };
    type Change = fn(&str) -> mailroom::core::http::Request;
    let changes: [(&str, Change); 3] = [
        ("a file removed", |send| request("DELETE", &format!("{send}/attachments/1"))),
        ("a file added", |send| {
            request("POST", &format!("{send}/attachments"))
                .json(json!({ "name": "other.pdf", "content_type": "application/pdf", "content_base64": "JVBERi0=" }))
        }),
        ("the text edited", |send| request("PATCH", send).json(json!({ "text": "Pay to account 666." }))),
    ];
    for (change, changing) in changes {
        for submit_first in [true, false] {
            let send = draft_with_two_files();
            let submit = request("POST", &format!("{send}/submit")).bearer(token);
            let other = changing(&send).bearer(token);
            let answers =
                world.node.send_together(if submit_first { vec![submit, other] } else { vec![other, submit] });
            let statuses: Vec<u16> = answers.iter().map(|answer| answer.status).collect();
            let refused: Vec<_> = answers.iter().filter(|answer| answer.status >= 400).collect();
            assert_eq!(
                refused.len(),
                1,
                "{change}, submit first {submit_first}: one of the two is refused: {statuses:?}"
            );
            assert_refused(refused[0], 409, "raced");

            let shown = body(&world.call("GET", &send, Some(token), None));
            if shown["state"] == "submitted" {
                let id = shown["id"].as_str().unwrap();
                let version = version_of(id);
                let version: serde_json::Value = serde_json::from_str(&version.unwrap()).unwrap();
                assert_eq!(version["text"], shown["text"], "{change}: the words submitted are the words kept");
                let names = |files: &serde_json::Value| -> Vec<String> {
                    files.as_array().unwrap().iter().map(|file| file["name"].as_str().unwrap().to_string()).collect()
                };
                assert_eq!(
                    names(&version["attachments"]),
                    names(&shown["attachments"]),
                    "{change}: the files submitted are the files kept"
                );
            } else {
                assert_eq!(shown["state"], "draft", "{change}: {shown}");
            }
        }
    }
}

#[test]
fn a_decision_raced_against_another_or_the_send_taken_back_has_one_winner_and_leaves_at_most_once() {
    decisions_raced(false);
}

#[test]
fn a_decision_raced_in_a_moved_mailbox_has_one_winner_and_leaves_at_most_once() {
    decisions_raced(true);
}

fn decisions_raced(moved: bool) {
    let desk = Desk::new("support@mailroom.test")
        .with("writer@example.com", WORKS_THE_MAILBOX)
        .with("dee@example.com", &["mailbox.metadata.read", "approval.decide"])
        .with("cleo@example.com", &["mailbox.metadata.read", "approval.decide"]);
    let (world, sends) = (&desk.world, desk.sends());
    let (writer, ada, cleo) = (&desk.person("writer").token, &desk.person("dee").token, &desk.person("cleo").token);
    if moved {
        crate::moving_mail::moved(world, &desk.mailbox);
    }
    type Other = fn(&str, &serde_json::Value, (&str, &str)) -> mailroom::core::http::Request;
    let others: [(&str, Other); 3] = [
        ("another approval", |send, version, (_, cleo)| {
            request("POST", &format!("{send}/approve")).json(version.clone()).bearer(cleo)
        }),
        ("a refusal", |send, version, (_, cleo)| {
            let mut refusal = version.clone();
            refusal["reason"] = json!("No.");
            request("POST", &format!("{send}/refuse")).json(refusal).bearer(cleo)
        }),
        ("the send taken back", |send, _, (writer, _)| request("POST", &format!("{send}/cancel")).bearer(writer)),
    ];
    for (other, racing) in others {
        let draft = world.call(
            "POST",
            &sends,
            Some(writer),
            Some(json!({ "to": ["ana@customer.example"], "subject": "Terms", "text": "Agreed." })),
        );
        let send = format!("{sends}/{}", body(&draft)["id"].as_str().unwrap());
        assert_eq!(world.call("POST", &format!("{send}/submit"), Some(writer), None).status, 200);
        let version = world.decision(ada, &send);
        let sent_before = world.node.mailer.sent.borrow().len();
        let approve = request("POST", &format!("{send}/approve")).json(version.clone()).bearer(ada);
        let answers = world.node.send_together(vec![approve, racing(&send, &version, (writer, cleo))]);
        let statuses: Vec<u16> = answers.iter().map(|answer| answer.status).collect();
        let refused: Vec<_> = answers.iter().filter(|answer| answer.status >= 400).collect();
        assert_eq!(refused.len(), 1, "{other}, moved {moved}: one of the two is refused: {statuses:?}");
        assert_refused(refused[0], 409, "raced");
        let sent = world.node.mailer.sent.borrow().len() - sent_before;
        let state = body(&world.call("GET", &send, Some(ada), None))["state"].clone();
        let approved = answers[0].status == 200 || (other == "another approval" && answers[1].status == 200);
        match approved {
            true => assert_eq!((sent, state), (1, json!("dispatched")), "{other}: approved, it left once"),
            false => assert_eq!(sent, 0, "{other}: not approved, nothing left ({state})"),
        }
    }
}
