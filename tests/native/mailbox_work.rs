//! A call's work in a mailbox's own database (decision 0040), driven through
//! `Context` as a handler would: its read goes out beside the checks on D1 and
//! is answered only once they pass; its changes commit there with its entry
//! in the mailbox's segment of the chain, within the route's two round trips;
//! a guard refuses there; a call changes one database; and a relation revoked
//! stops the next call.

use mailroom::audit::AuditChain;
use mailroom::authz::{checks_for, credentials};
use mailroom::core::context::{Admitted, Context};
use mailroom::core::http::{Request, Response, Surface};
use mailroom::core::mailbox_storage::MailboxStorage;
use mailroom::core::node::Node;
use mailroom::core::refusal::Refusal;
use mailroom::core::storage::Statement;
use mailroom_contract::{PathParameter, RouteId, registry};

use crate::support::World;

const THREAD: &str = "thr_01M00000000000000000000000";

/// The context the dispatcher would hand a handler of `route` for `request`
/// on `mailbox`.
fn context<'a>(
    node: &'a Node<'a>,
    chain: &'a AuditChain<'a>,
    request: &'a Request,
    route: RouteId,
    mailbox: &str,
) -> Context<'a> {
    let route = registry().route(route);
    let now_ms = node.platform.now_ms();
    let caller = credentials::identify(request, &node.config.session_key, now_ms).unwrap().caller;
    let path = vec![(PathParameter::MailboxId, mailbox.to_string()), (PathParameter::ThreadId, THREAD.to_string())];
    let lookup = |wanted: PathParameter| path.iter().find(|(name, _)| *name == wanted).map(|(_, value)| value.clone());
    let checks = checks_for(route, &caller, now_ms, lookup).unwrap();
    Context::new(
        node,
        Admitted {
            route,
            request,
            surface: Surface::Rest,
            now_ms,
            caller,
            path: path.clone(),
            query: Vec::new(),
            checks,
            audited: registry().is_audited(route.id),
            ledger: chain,
            reentry: |_, _, _, _| Box::pin(async { Response::refusal(&Refusal::internal()) }),
        },
    )
}

fn request_for(token: &str, mailbox: &str) -> Request {
    use mailroom::testing::RequestExt;
    mailroom::testing::request("PATCH", &format!("/api/mailboxes/{mailbox}/threads/{THREAD}")).bearer(token)
}

const NOTES: &str = "CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, body TEXT NOT NULL)";

/// The segment's entries of `mailbox`, as (action, outcome, actor).
fn segment(world: &World, mailbox: &str) -> Vec<(String, String, String)> {
    let Some(database) = world.node.mailboxes.database(mailbox) else { return Vec::new() };
    let count = database.database.count("SELECT COUNT(*) FROM audit_entries");
    (1..=count)
        .map(|seq| {
            let column = |name: &str| {
                database
                    .database
                    .peek(&format!("SELECT {name} FROM audit_entries WHERE seq = {seq}"))
                    .unwrap_or_default()
            };
            (column("action"), column("outcome"), column("actor"))
        })
        .collect()
}

fn set_up() -> (World, String, (String, String)) {
    let world = World::new();
    let mailbox = world.mailbox("support@example.com");
    let ben = world.person("ben@example.com");
    world.grant_all(&ben.0, &["mailbox.metadata.read", "send.propose"], &mailbox);
    // The mailbox's database has a table of its own to change.
    world.node.run(world.node.mailboxes.of(&mailbox).execute(vec![Statement::new(NOTES)])).unwrap();
    (world, mailbox, ben)
}

#[test]
fn a_change_of_a_mailbox_commits_there_with_its_entry_in_the_mailboxs_segment() {
    let (world, mailbox, (ben, token)) = set_up();
    let node = world.node.node();
    let chain = AuditChain::new(node.config, node.platform);
    let request = request_for(&token, &mailbox);
    let entries_before = world.audit_of(None).len();

    let mut context = context(&node, &chain, &request, RouteId::UpdateThread, &mailbox);
    let [count] = <[_; 1]>::try_from(
        world
            .node
            .run(context.read_in_mailbox(&mailbox, vec![Statement::new("SELECT COUNT(*) AS n FROM notes")]))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(count.first().unwrap().integer("n").unwrap(), 0);
    context.write_in_mailbox(&mailbox, Statement::new("INSERT INTO notes (id, body) VALUES ('a', 'kept')")).unwrap();
    let follows = Statement::new("UPDATE people SET name = name WHERE id = 'follows the change'");
    context.defer_write_on_success(follows.clone());
    let answer = context.json(&serde_json::json!({ "ok": true }));
    let response = world.node.run(context.finish(Ok(answer)));

    assert_eq!(response.status, 200);
    assert_eq!(
        response.deferred.on_d1.first(),
        Some(&follows),
        "what follows the change on D1 is written after the answer"
    );
    assert_eq!(response.round_trips, 2, "the read beside the checks, then the commit");
    assert_eq!(response.seal_segment.as_deref(), Some(mailbox.as_str()), "the segment is sealed after the answer");
    assert!(!response.seal_chain, "nothing was appended to D1's chain");
    let database = world.node.mailboxes.database(&mailbox).unwrap();
    assert_eq!(database.database.peek("SELECT body FROM notes WHERE id = 'a'").as_deref(), Some("kept"));
    assert_eq!(segment(&world, &mailbox), [("update_thread".to_string(), "ok".to_string(), ben.clone())]);
    assert_eq!(world.audit_of(None).len(), entries_before, "D1's chain has no entry of it");

    world.node.seal_segment(&mailbox);
    world.node.maintain();
    let verification = world.verify();
    assert_eq!(verification["intact"], true, "{verification}");
    let anchored = &verification["segments"][0];
    assert_eq!(
        (anchored["mailbox_id"].as_str(), anchored["anchored"]["seq"].as_i64()),
        (Some(mailbox.as_str()), Some(1))
    );
}

#[test]
fn a_read_in_a_mailbox_is_answered_only_when_the_checks_on_d1_pass_and_a_revoked_relation_stops_the_next_call() {
    let (world, mailbox, (ben, token)) = set_up();
    world
        .node
        .run(
            world.node.mailboxes.of(&mailbox).execute(vec![Statement::new("INSERT INTO notes VALUES ('a', 'secret')")]),
        )
        .unwrap();
    let node = world.node.node();
    let chain = AuditChain::new(node.config, node.platform);
    let read = |token: &str| -> Result<String, u16> {
        let request = request_for(token, &mailbox);
        let mut context = context(&node, &chain, &request, RouteId::UpdateThread, &mailbox);
        match world.node.run(context.read_in_mailbox(&mailbox, vec![Statement::new("SELECT body FROM notes")])) {
            Ok(results) => Ok(results[0].first().unwrap().text("body").unwrap()),
            Err(refusal) => Err(world.node.run(context.finish(Err(refusal))).status),
        }
    };
    assert_eq!(read(&token), Ok("secret".to_string()));
    let (_, cleos_token) = world.person("cleo@example.com");
    assert!(matches!(read(&cleos_token), Err(403 | 404)), "no relation, no rows");

    let revoked = world.revoke(&ben, "send.propose", &mailbox);
    assert_eq!(revoked.status, 200, "{}", crate::support::text(&revoked));
    assert!(matches!(read(&token), Err(403 | 404)), "the next call after the revocation is refused");
}

#[test]
fn a_guard_refuses_in_the_mailbox_applying_nothing_and_recording_the_refusal_there() {
    let (world, mailbox, (ben, token)) = set_up();
    let node = world.node.node();
    let chain = AuditChain::new(node.config, node.platform);
    let request = request_for(&token, &mailbox);
    let mut context = context(&node, &chain, &request, RouteId::UpdateThread, &mailbox);
    world.node.run(context.read_in_mailbox(&mailbox, Vec::new())).unwrap();
    context.write_in_mailbox(&mailbox, Statement::new("INSERT INTO notes (id, body) VALUES ('a', 'never')")).unwrap();
    // Evaluated after the write, in the mailbox's database: there is now a note, so it fails.
    context.guard(Statement::new("NOT EXISTS (SELECT 1 FROM notes)"), Refusal::not_found("conversation", THREAD));
    context.defer_write_on_success(Statement::new("UPDATE people SET name = name WHERE id = 'never'"));
    let answer = context.json(&serde_json::json!({ "ok": true }));
    let response = world.node.run(context.finish(Ok(answer)));
    assert_eq!(response.status, 404, "the guard's own refusal: {}", String::from_utf8_lossy(&response.body));
    assert!(response.deferred.is_empty(), "nothing follows a change refused: {:?}", response.deferred);
    let database = world.node.mailboxes.database(&mailbox).unwrap();
    assert_eq!(database.database.count("SELECT COUNT(*) FROM notes"), 0, "nothing applied");
    assert_eq!(segment(&world, &mailbox), [("update_thread".to_string(), "refused".to_string(), ben)]);
}

#[test]
fn a_read_on_d1_beside_a_mailbox_s_commit_takes_no_round_trip_and_its_failure_undoes_nothing() {
    let (world, mailbox, (ben, token)) = set_up();
    let node = world.node.node();
    let chain = AuditChain::new(node.config, node.platform);
    let request = request_for(&token, &mailbox);

    let mut context = context(&node, &chain, &request, RouteId::UpdateThread, &mailbox);
    world.node.run(context.read_in_mailbox(&mailbox, Vec::new())).unwrap();
    context.write_in_mailbox(&mailbox, Statement::new("INSERT INTO notes (id, body) VALUES ('a', 'named')")).unwrap();
    let name = Statement::new("SELECT name FROM people WHERE id = ?1").bind(ben.as_str());
    let read = world.node.run(context.read_as_it_commits(vec![name])).unwrap();
    assert_eq!(read[0].first().unwrap().text("name").unwrap(), "ben");
    let response = world.node.run(context.finish(Ok(Response::json(200, &serde_json::json!({})))));
    assert_eq!((response.status, response.round_trips), (200, 2), "the read went beside the commit");

    // A read that fails beside a commit that does not: the change stands, and
    // the call answers without what the read would have given.
    let mut context = self::context(&node, &chain, &request, RouteId::UpdateThread, &mailbox);
    world.node.run(context.read_in_mailbox(&mailbox, Vec::new())).unwrap();
    context.write_in_mailbox(&mailbox, Statement::new("INSERT INTO notes (id, body) VALUES ('b', 'kept')")).unwrap();
    let read = world.node.run(context.read_as_it_commits(vec![Statement::new("SELECT * FROM no_such_table")]));
    assert_eq!(read, Ok(Vec::new()));
    let response = world.node.run(context.finish(Ok(Response::json(200, &serde_json::json!({})))));
    assert_eq!(response.status, 200);
    let database = world.node.mailboxes.database(&mailbox).unwrap();
    assert_eq!(database.database.count("SELECT COUNT(*) FROM notes"), 2);
    assert_eq!(segment(&world, &mailbox).len(), 2, "each change with its entry");
}

#[test]
fn a_call_changes_one_database() {
    let (world, mailbox, (_, token)) = set_up();
    let other = world.mailbox("sales@example.com");
    let node = world.node.node();
    let chain = AuditChain::new(node.config, node.platform);
    let request = request_for(&token, &mailbox);

    let mut context = context(&node, &chain, &request, RouteId::UpdateThread, &mailbox);
    context.write_in_mailbox(&mailbox, Statement::new("INSERT INTO notes VALUES ('a', 'one')")).unwrap();
    assert!(context.write_in_mailbox(&other, Statement::new("SELECT 1")).is_err(), "a second mailbox");

    let mut context = self::context(&node, &chain, &request, RouteId::UpdateThread, &mailbox);
    context.write(Statement::new("UPDATE people SET name = name WHERE 0"));
    context.write_in_mailbox(&mailbox, Statement::new("INSERT INTO notes VALUES ('b', 'two')")).unwrap();
    let answer = context.json(&serde_json::json!({ "ok": true }));
    let response = world.node.run(context.finish(Ok(answer)));
    assert_eq!(response.status, 500, "D1 and a mailbox in one call: {}", String::from_utf8_lossy(&response.body));
    let database = world.node.mailboxes.database(&mailbox).unwrap();
    assert_eq!(database.database.count("SELECT COUNT(*) FROM notes"), 0, "nothing applied");
    assert!(segment(&world, &mailbox).is_empty(), "and nothing recorded there");
}

#[test]
fn a_read_over_several_mailboxes_goes_out_at_once_and_merges_into_one_page() {
    use mailroom::core::paging::{Order, encode_cursor, merge};
    let (world, support, (ben, token)) = set_up();
    let sales = world.mailbox("sales@example.com");
    world.grant_all(&ben, &["mailbox.metadata.read", "send.propose"], &sales);
    let notes = "CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, body TEXT NOT NULL, at INTEGER)";
    for (mailbox, rows) in
        [(&support, "('n1', 'a', 10), ('n3', 'c', 30)"), (&sales, "('n2', 'b', 20), ('n4', 'd', 40)")]
    {
        let database = world.node.mailboxes.of(mailbox);
        let setup = vec![
            Statement::new("DROP TABLE IF EXISTS notes"),
            Statement::new(notes),
            Statement::new(format!("INSERT INTO notes VALUES {rows}")),
        ];
        world.node.run(database.execute(setup)).unwrap();
    }
    let node = world.node.node();
    let chain = AuditChain::new(node.config, node.platform);
    let request = request_for(&token, &support);
    let mut context = context(&node, &chain, &request, RouteId::ListMessages, &support);
    let page = |limit: i64| {
        Statement::new("SELECT id, body, at FROM notes ORDER BY at DESC, id DESC LIMIT ?1").bind(limit + 1)
    };
    let answered = world
        .node
        .run(context.read_in_mailboxes(vec![(support.clone(), vec![page(2)]), (sales.clone(), vec![page(2)])]))
        .unwrap();
    let pages: Vec<Vec<(i64, String)>> = answered
        .iter()
        .map(|results| {
            results[0].rows.iter().map(|row| (row.integer("at").unwrap(), row.text("id").unwrap())).collect()
        })
        .collect();
    let (merged, next) = merge(pages, 2, Order::NewestFirst, |row| (row.0, &row.1));
    assert_eq!(merged, [(40, "n4".to_string()), (30, "n3".to_string())]);
    assert_eq!(next, Some(encode_cursor(30, "n3")));
    // A read of metadata, which the chain does not record: its round trips are the read's alone.
    let answer = context.json(&serde_json::json!({}));
    let response = world.node.run(context.finish(Ok(answer)));
    assert_eq!(
        (response.round_trips, response.commit_attempts),
        (1, 0),
        "both mailboxes beside the checks: one round trip's time"
    );

    // More mailboxes than one read may ask (each a subrequest) is a handler's mistake.
    let mut context = self::context(&node, &chain, &request, RouteId::UpdateThread, &support);
    let too_many =
        (0..=mailroom::core::context::MAILBOXES_PER_READ).map(|_| (support.clone(), vec![page(1)])).collect();
    let refused = world.node.run(context.read_in_mailboxes(too_many)).unwrap_err();
    assert_eq!(refused.status, 500);
}
