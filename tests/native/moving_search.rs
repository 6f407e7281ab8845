//! A search across mailboxes when some keep their mail in their own
//! databases (decision 0040): D1's mailboxes walked on D1, each moved one in
//! its own database, asked as the search's entry commits (two round trips),
//! merged newest first by time, then store, then each store's own order; page
//! by page every hit once, ties in time across stores included; what a caller
//! may search decided on D1, a revoked relation stopping the next search; a
//! later page costing the same however much mail there is; and a search
//! reaching more moved mailboxes than one read may ask going through them a
//! group at a time, each page within its round trips, what it reaches read on
//! D1 on every page whatever its cursor says.

use mailroom::mail::Delivery;
use serde_json::Value;

use crate::moving_mail::moved;
use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";
const BILLING: &str = "billing@mailroom.test";

fn note(world: &World, to: &str, number: usize, subject: &str) -> String {
    let raw = format!(
        "From: Ana Lima <ana@customer.example>\r\nTo: {to}\r\nSubject: {subject}\r\n\
         Message-ID: <search-{number}@customer.example>\r\nDate: Fri, 27 Nov 2026 09:15:00 +0000\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\nAbout the quarterly figures, note {number}.\r\n"
    );
    match world.node.deliver("ana@customer.example", to, raw.as_bytes()) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("delivering note {number}: {other:?}"),
    }
}

/// Every hit of `path`, page by page: (id, matched_in), and each page's round trips.
fn every_page(world: &World, token: &str, path: &str) -> (Vec<(String, String)>, Vec<u32>) {
    let (mut hits, mut round_trips) = (Vec::new(), Vec::new());
    let mut next: Option<String> = None;
    for _ in 0..100 {
        let asked = match &next {
            None => path.to_string(),
            Some(cursor) => format!("{path}&cursor={cursor}"),
        };
        let answer = world.call("GET", &asked, Some(token), None);
        assert_eq!(answer.status, 200, "{}", text(&answer));
        round_trips.push(answer.round_trips);
        let page = body(&answer);
        for hit in page["results"].as_array().unwrap() {
            hits.push((hit["id"].as_str().unwrap().to_string(), hit["matched_in"].as_str().unwrap().to_string()));
        }
        match page["next_cursor"].as_str() {
            Some(cursor) => next = Some(cursor.to_string()),
            None => return (hits, round_trips),
        }
    }
    panic!("a search that never ended");
}

/// Support and billing in D1, sales moved; notes delivered to each in turn,
/// some before sales moved and some after; a reader of all three.
struct Spread {
    world: World,
    sales: String,
    reader: (String, String),
    /// Every note's receipt, newest first.
    newest_first: Vec<String>,
}

fn spread() -> Spread {
    let world = World::with_mail_in_d1();
    let support = world.mailbox(SUPPORT);
    let billing = world.mailbox(BILLING);
    let sales = world.mailbox("sales@mailroom.test");
    let reader = world.person("reader@example.com");
    for mailbox in [&support, &billing, &sales] {
        world.grant_all(&reader.0, &["mailbox.metadata.read", "mailbox.content.read"], mailbox);
    }
    let to = [SUPPORT, BILLING, "sales@mailroom.test"];
    let mut delivered: Vec<String> = (0..6).map(|number| note(&world, to[number % 3], number, "Figures")).collect();
    moved(&world, &sales);
    delivered.extend((6..12).map(|number| note(&world, to[number % 3], number, "Figures")));
    delivered.reverse();
    Spread { world, sales, reader, newest_first: delivered }
}

#[test]
fn a_search_across_mailboxes_finds_every_store_s_mail_once_newest_first_page_by_page() {
    let Spread { world, sales, reader, newest_first } = spread();
    let in_sales = world.node.mailboxes.database(&sales).unwrap().database.count("SELECT count(*) FROM receipts");
    assert_eq!(in_sales, 4, "two notes moved, two delivered after");
    let mut pages = 0;
    for limit in [1, 2, 5, 25] {
        let (hits, round_trips) = every_page(&world, &reader.1, &format!("/api/search?q=quarterly&limit={limit}"));
        let ids: Vec<&String> = hits.iter().map(|(id, _)| id).collect();
        assert_eq!(ids, newest_first.iter().collect::<Vec<_>>(), "limit {limit}");
        assert!(hits.iter().all(|(_, matched)| matched == "body"), "{hits:?}");
        assert!(round_trips.iter().all(|trips| *trips <= 2), "limit {limit}: {round_trips:?}");
        pages += round_trips.len();
    }
    // Each search was recorded, the ones that asked sales as they did.
    let searches = world.audit().into_iter().filter(|entry| entry["action"] == "search_messages").count();
    assert_eq!(searches, pages);
}

#[test]
fn ties_in_time_across_stores_are_each_shown_once() {
    let Spread { world, sales, reader, newest_first } = spread();
    // Every message received in the same millisecond, in D1 and in sales' own
    // database alike (each store's order of time and storage still agrees).
    world.node.database.tamper("UPDATE receipts SET received_at = 1795000000000");
    world
        .node
        .mailboxes
        .database(&sales)
        .unwrap()
        .database
        .execute_sql("UPDATE receipts SET received_at = 1795000000000");
    let mut expected = newest_first.clone();
    for limit in [1, 2, 3, 7] {
        let (hits, _) = every_page(&world, &reader.1, &format!("/api/search?q=quarterly&limit={limit}"));
        let mut found: Vec<String> = hits.into_iter().map(|(id, _)| id).collect();
        assert_eq!(found.len(), expected.len(), "limit {limit}: each once: {found:?}");
        found.sort();
        expected.sort();
        assert_eq!(found, expected, "limit {limit}");
    }
}

#[test]
fn what_a_search_across_mailboxes_reaches_in_a_moved_one_is_decided_on_d1() {
    let Spread { world, sales, reader, newest_first } = spread();
    let in_sales: Vec<String> = world
        .node
        .mailboxes
        .database(&sales)
        .unwrap()
        .database
        .rows("SELECT id FROM receipts")
        .into_iter()
        .map(|row| row[0].clone())
        .collect();
    // Metadata alone in sales: its messages match by their headers only, and
    // show no passage.
    let (metadata_only, token) = world.person("headers@example.com");
    world.grant_all(&metadata_only, &["mailbox.metadata.read"], &sales);
    let found = body(&world.call("GET", "/api/search?q=figures", Some(&token), None));
    let hits = found["results"].as_array().unwrap();
    assert_eq!(hits.len(), in_sales.len(), "{found}");
    assert!(hits.iter().all(|hit| hit["matched_in"] == "headers" && hit.get("snippet").is_none()), "{found}");
    let bodies = body(&world.call("GET", "/api/search?q=quarterly", Some(&token), None));
    assert_eq!(bodies["results"], Value::Array(Vec::new()), "no body is searched without content");

    // Revoked, the next search reaches none of sales' mail.
    world.revoke(&reader.0, "mailbox.metadata.read", &sales);
    let (hits, _) = every_page(&world, &reader.1, "/api/search?q=quarterly&limit=5");
    let ids: Vec<String> = hits.into_iter().map(|(id, _)| id).collect();
    let others: Vec<String> = newest_first.into_iter().filter(|id| !in_sales.contains(id)).collect();
    assert_eq!(ids, others);
}

/// One page of a search: its hits' ids, its next cursor, what it says of its
/// group of mailboxes, and its round trips.
fn search_page(world: &World, token: &str, path: &str) -> (Vec<String>, Option<String>, Value, u32) {
    let answer = world.call("GET", path, Some(token), None);
    assert_eq!(answer.status, 200, "{}", text(&answer));
    let page = body(&answer);
    let hits = page["results"].as_array().unwrap().iter().map(|hit| hit["id"].as_str().unwrap().to_string()).collect();
    let next = page["next_cursor"].as_str().map(str::to_string);
    (hits, next, page["mailboxes_searched"].clone(), answer.round_trips)
}

#[test]
fn a_search_reaching_more_moved_mailboxes_than_one_read_may_ask_goes_through_them_a_group_at_a_time() {
    let group = mailroom::core::context::MAILBOXES_PER_READ;
    let world = World::with_mail_in_d1();
    let support = world.mailbox(SUPPORT);
    let reader = world.person("reader@example.com");
    world.grant_all(&reader.0, &["mailbox.metadata.read", "mailbox.content.read"], &support);
    // Two groups and one more mailbox; the ids sort in the order made.
    let mut moved_mailboxes = Vec::new();
    for number in 0..=2 * group {
        let mailbox = world.mailbox(&format!("box{number}@mailroom.test"));
        world.grant_all(&reader.0, &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
        moved(&world, &mailbox);
        moved_mailboxes.push(mailbox);
    }
    let mut sorted = moved_mailboxes.clone();
    sorted.sort();
    assert_eq!(sorted, moved_mailboxes);
    // Two notes in D1, and in each moved mailbox one, the last mailbox of
    // each group getting the newest.
    let mut in_d1 = [note(&world, SUPPORT, 0, "Figures"), note(&world, SUPPORT, 1, "Figures")];
    in_d1.reverse();
    let notes: Vec<String> = (0..moved_mailboxes.len())
        .map(|index| note(&world, &format!("box{index}@mailroom.test"), 10 + index, "Figures"))
        .collect();

    for limit in [3, 25] {
        let path = format!("/api/search?q=quarterly&limit={limit}");
        let (mut found, mut searched, mut next) = (Vec::new(), Vec::new(), None::<String>);
        loop {
            let asked = next.as_ref().map_or(path.clone(), |cursor| format!("{path}&cursor={cursor}"));
            let (hits, cursor, group_said, round_trips) = search_page(&world, &reader.1, &asked);
            assert!(round_trips <= 2, "limit {limit}: {round_trips} round trips");
            assert_eq!(group_said["in_all"], moved_mailboxes.len(), "limit {limit}: {group_said}");
            searched.push(group_said);
            found.extend(hits);
            match cursor {
                Some(cursor) => next = Some(cursor),
                None => break,
            }
        }
        // Group by group, each newest first: D1's notes with the first.
        let mut expected = Vec::new();
        for (number, mailboxes) in moved_mailboxes.chunks(group).enumerate() {
            let mut of_group: Vec<String> =
                notes[number * group..number * group + mailboxes.len()].iter().rev().cloned().collect();
            if number == 0 {
                of_group.extend(in_d1.iter().cloned());
            }
            expected.extend(of_group);
        }
        assert_eq!(found, expected, "limit {limit}: every note once, group by group");
        let groups_said: Vec<(u64, Vec<String>)> = searched
            .iter()
            .map(|said| {
                let ids = said["mailbox_ids"].as_array().unwrap().iter().map(|id| id.as_str().unwrap().to_string());
                (said["searched_before"].as_u64().unwrap(), ids.collect())
            })
            .collect();
        let mut distinct = groups_said.clone();
        distinct.dedup();
        let expected_groups: Vec<(u64, Vec<String>)> = moved_mailboxes
            .chunks(group)
            .enumerate()
            .map(|(number, mailboxes)| ((number * group) as u64, mailboxes.to_vec()))
            .collect();
        assert_eq!(distinct, expected_groups, "limit {limit}");
    }

    // Authority is read on every page: a relation revoked after the first
    // page keeps that mailbox out of the next group's pages.
    let (_, cursor, _, _) = search_page(&world, &reader.1, "/api/search?q=quarterly&limit=25");
    let revoked = &moved_mailboxes[group + 1];
    for relation in ["mailbox.metadata.read", "mailbox.content.read"] {
        world.revoke(&reader.0, relation, revoked);
    }
    let (hits, _, said, _) =
        search_page(&world, &reader.1, &format!("/api/search?q=quarterly&limit=25&cursor={}", cursor.unwrap()));
    assert!(!hits.contains(&notes[group + 1]), "{hits:?}");
    assert_eq!(hits.len(), group, "the group is the next {group} it may search");
    assert!(!said["mailbox_ids"].as_array().unwrap().iter().any(|id| id == revoked.as_str()), "{said}");

    // A group's cursor names where to start, never what may be searched: a
    // reader of one mailbox, handed cursors of every group, finds its notes only.
    let (outsider, token) = world.person("outsider@example.com");
    world.grant_all(&outsider, &["mailbox.metadata.read", "mailbox.content.read"], &moved_mailboxes[0]);
    for after in [&moved_mailboxes[0], &moved_mailboxes[group - 1], &moved_mailboxes[2 * group - 1]] {
        use base64::Engine;
        let cursor = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("after:group:rcp_:{after}"));
        let (hits, next, said, _) = search_page(&world, &token, &format!("/api/search?q=quarterly&cursor={cursor}"));
        assert_eq!((hits, next, said), (Vec::new(), None, Value::Null), "after {after}");
    }
    let (hits, _, said, _) = search_page(&world, &token, "/api/search?q=quarterly");
    assert_eq!((hits, said), (vec![notes[0].clone()], Value::Null));
    // And a group's cursor is a search across mailboxes' own.
    let (_, cursor, _, _) = search_page(&world, &reader.1, "/api/search?q=quarterly&limit=25");
    let one = world.call(
        "GET",
        &format!("/api/search?q=quarterly&mailbox={support}&cursor={}", cursor.unwrap()),
        Some(&reader.1),
        None,
    );
    assert_refused(&one, 400, "invalid_query_parameter");
}

/// SQLite's steps for the statements of one call whose SQL contains `marks`,
/// in D1 and in `mailbox`'s own database.
fn steps_of(world: &World, token: &str, path: &str, mailbox: &str) -> i32 {
    let object = world.node.mailboxes.database(mailbox).unwrap();
    world.node.database.take_costs();
    object.database.take_costs();
    let answer = world.call("GET", path, Some(token), None);
    assert_eq!(answer.status, 200, "{}", text(&answer));
    let costs = world.node.database.take_costs().into_iter().chain(object.database.take_costs());
    costs.filter(|cost| cost.sql.contains(" MATCH ")).map(|cost| cost.steps).sum()
}

#[test]
fn a_later_page_across_stores_costs_the_same_however_much_mail_there_is() {
    let world = World::with_mail_in_d1();
    let support = world.mailbox(SUPPORT);
    let sales = world.mailbox("sales@mailroom.test");
    let reader = world.person("reader@example.com");
    for mailbox in [&support, &sales] {
        world.grant_all(&reader.0, &["mailbox.metadata.read", "mailbox.content.read"], mailbox);
    }
    moved(&world, &sales);
    let to = [SUPPORT, "sales@mailroom.test"];
    let mut delivered = 0;
    let mut deliver_up_to = |count: usize| {
        while delivered < count {
            note(&world, to[delivered % 2], delivered, "Figures");
            delivered += 1;
        }
    };
    let fourth_page = |world: &World| {
        let path = "/api/search?q=quarterly&limit=5";
        let mut current = path.to_string();
        for _ in 1..4 {
            let next =
                body(&world.call("GET", &current, Some(&reader.1), None))["next_cursor"].as_str().unwrap().to_string();
            current = format!("{path}&cursor={next}");
        }
        steps_of(world, &reader.1, &current, &sales)
    };
    deliver_up_to(40);
    let small = fourth_page(&world);
    deliver_up_to(400);
    let large = fourth_page(&world);
    assert!(large <= small + small / 10, "{small} steps at 40 messages, {large} at 400");
}
