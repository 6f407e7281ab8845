//! The senders whose remote images a person always sees: kept per person, in
//! lower case, each person acting only on their own list, held to the limit,
//! recorded in the audit chain, bad addresses refused naming the field, and
//! never reached by an agent.

use mailroom_contract::api::image_sender_limits::PER_PERSON;
use serde_json::Value;

use crate::support::*;

const SENDERS: &str = "/api/me/image-senders";

fn listed(world: &World, token: &str) -> Vec<String> {
    let answer = world.call("GET", SENDERS, Some(token), None);
    assert_eq!(answer.status, 200, "{}", text(&answer));
    let list = body(&answer);
    assert_eq!(list["limit"], PER_PERSON);
    list["senders"].as_array().unwrap().iter().map(|sender| sender["address"].as_str().unwrap().to_string()).collect()
}

fn add(world: &World, token: &str, segment: &str) -> mailroom::core::http::Response {
    world.call("PUT", &format!("{SENDERS}/{segment}"), Some(token), None)
}

#[test]
fn a_sender_is_kept_in_lower_case_once_whatever_its_spelling_and_recorded() {
    let world = World::new();
    let (_, ben) = world.person("ben@example.com");
    assert_eq!(listed(&world, &ben), Vec::<String>::new());

    let added = add(&world, &ben, "News%40Letters.Example");
    assert_eq!(added.status, 200, "{}", text(&added));
    let first: Value = body(&added);
    assert_eq!(first["address"], "news@letters.example");
    let entry = world.last_audit_entry();
    assert_eq!((entry["action"].as_str(), entry["outcome"].as_str()), (Some("add_image_sender"), Some("ok")));
    assert_eq!(entry["object"], "news@letters.example", "{entry}");

    // The same sender spelt another way is the same sender, kept as first added.
    let again = add(&world, &ben, "NEWS@letters.example");
    assert_eq!(body(&again), first);
    add(&world, &ben, "ana%2Bnews@customer.example");
    assert_eq!(listed(&world, &ben), ["ana+news@customer.example", "news@letters.example"]);

    let removed = world.call("DELETE", &format!("{SENDERS}/News@LETTERS.example"), Some(&ben), None);
    assert_eq!(removed.status, 200, "{}", text(&removed));
    assert_eq!(body(&removed)["address"], "news@letters.example");
    assert_eq!(world.last_audit_entry()["action"], "remove_image_sender");
    assert_eq!(listed(&world, &ben), ["ana+news@customer.example"]);
}

#[test]
fn what_is_not_an_address_is_refused_naming_the_field() {
    let world = World::new();
    let (_, ben) = world.person("ben@example.com");
    for segment in
        ["news", "news%40letters", "a%20b@letters.example", "%3Cnews%40letters.example%3E", "news%FF@letters.example"]
    {
        let refused = add(&world, &ben, segment);
        assert_refused(&refused, 400, "invalid_address");
        assert!(body(&refused)["error"]["message"].as_str().unwrap().contains("`senderAddress`"), "{segment}");
        let refused = world.call("DELETE", &format!("{SENDERS}/{segment}"), Some(&ben), None);
        assert_refused(&refused, 400, "invalid_address");
    }
    assert_eq!(world.last_audit_entry()["outcome"], "refused");
    assert_eq!(listed(&world, &ben), Vec::<String>::new());
    let missing = world.call("DELETE", &format!("{SENDERS}/news@letters.example"), Some(&ben), None);
    assert_refused(&missing, 404, "not_found");
}

#[test]
fn a_person_sees_and_changes_only_their_own_list() {
    let world = World::new();
    let (_, ben) = world.person("ben@example.com");
    let (_, cleo) = world.person("cleo@example.com");
    add(&world, &ben, "news@letters.example");
    assert_eq!(listed(&world, &cleo), Vec::<String>::new(), "ben's choice is not cleo's");
    let theirs = world.call("DELETE", &format!("{SENDERS}/news@letters.example"), Some(&cleo), None);
    assert_refused(&theirs, 404, "not_found");
    assert_eq!(listed(&world, &ben), ["news@letters.example"], "cleo removed nothing of ben's");
    // Nor does an administrator's list hold anyone else's.
    assert_eq!(listed(&world, &world.admin_token), Vec::<String>::new());
}

#[test]
fn no_agent_is_ever_given_the_list() {
    let world = World::new();
    let (ben_id, ben) = world.person("ben@example.com");
    add(&world, &ben, "news@letters.example");
    let (_, agent) = world.mint(&ben_id, &["reminders.read"], serde_json::json!([]));
    for (method, path) in [("GET", SENDERS.to_string()), ("PUT", format!("{SENDERS}/spam@letters.example"))] {
        let refused = world.call(method, &path, Some(&agent), None);
        assert_eq!(refused.status, 403, "{method} {path}: {}", text(&refused));
    }
    assert_eq!(listed(&world, &ben), ["news@letters.example"]);
}

#[test]
fn a_person_keeps_at_most_the_limit_and_makes_room_by_removing_one() {
    let world = World::new();
    let (_, ben) = world.person("ben@example.com");
    for number in 0..PER_PERSON {
        let added = add(&world, &ben, &format!("sender{number}@letters.example"));
        assert_eq!(added.status, 200, "{}", text(&added));
    }
    let refused = add(&world, &ben, "one-more@letters.example");
    assert_refused(&refused, 409, "too_many_image_senders");
    assert!(body(&refused)["error"]["reason"].as_str().unwrap().contains(&PER_PERSON.to_string()));
    assert_eq!(listed(&world, &ben).len(), PER_PERSON, "the refused add wrote nothing");
    assert_eq!(add(&world, &ben, "sender0@letters.example").status, 200, "one already kept is still answered");
    world.call("DELETE", &format!("{SENDERS}/sender0@letters.example"), Some(&ben), None);
    assert_eq!(add(&world, &ben, "one-more@letters.example").status, 200);
}
