//! The relationship tuple table's statements, and the only code that names the
//! table: single-object checks, listings, the guards that keep the node
//! administrable, and `holder_condition`, where delegation lives. `tuples`
//! re-exports them as the public face every domain calls; `PREDICATES` there
//! classifies each function here, and a test holds the two together.

use mailroom_contract::relation::ORGANIZATION_OBJECT;
use mailroom_contract::{ObjectKind, Relation};

use crate::authz::holder::{Holder, Losing};
use crate::core::storage::{Statement, Value};

/// The SQL condition that tuple row `t` is held by `holder`, with its parameters
/// in order. This is the one place a principal's tuples are defined, and so the
/// one place delegation lives:
///
/// - a person holds a tuple granted to them or to a team they belong to, while
///   they are enabled;
/// - an agent holds a tuple granted to it only while its sponsor holds the *same
///   relation* on the *same object* (directly or through a team), while the agent
///   is neither revoked, paused, expired nor a connection whose code was never
///   exchanged, and the sponsor is enabled. Each of those terms
///   is load-bearing: without the relation term an agent's content read would ride
///   on a sponsor's metadata read; without the object term one mailbox of the
///   sponsor's would license the agent everywhere.
///
/// Every intersected predicate below is built on this, so none can forget it.
fn holder_condition(holder: &Holder) -> (String, Vec<Value>) {
    match holder {
        Holder::Person(person_id) => {
            (person_condition("?"), vec![person_id.into(), person_id.into(), person_id.into()])
        }
        Holder::SponsorOf(agent_id) => (
            person_condition("(SELECT a.sponsor_id FROM agents a WHERE a.id = ?)"),
            vec![agent_id.into(), agent_id.into(), agent_id.into()],
        ),
        Holder::Agent { agent_id, now_ms } => (
            agent_condition("?"),
            vec![agent_id.into(), agent_id.into(), agent_id.into(), agent_id.into(), (*now_ms).into()],
        ),
        // The actor's kind is its id's prefix, read in SQL row by row: an agent
        // is held to exactly what `Agent` holds it to, a person to `Person`.
        Holder::ActorIn { column, now_ms } => (
            format!(
                "(CASE WHEN {column} LIKE 'agt\\_%' ESCAPE '\\' THEN {} ELSE {} END)",
                agent_condition(column),
                person_condition(column)
            ),
            vec![(*now_ms).into()],
        ),
    }
}

/// The condition that tuple row `t` is held by the agent `agent` (an SQL
/// expression used four times, followed by one parameter: now): the agent half
/// of `holder_condition`, where delegation's terms are stated once.
fn agent_condition(agent: &str) -> String {
    format!(
        "(t.subject = {agent} \
          AND EXISTS (SELECT 1 FROM relation_tuples s \
            WHERE s.relation = t.relation AND s.object = t.object \
              AND (s.subject = (SELECT a.sponsor_id FROM agents a WHERE a.id = {agent}) \
                   OR s.subject IN (SELECT m.team_id || '#member' FROM team_members m \
                                    WHERE m.person_id = (SELECT a.sponsor_id FROM agents a WHERE a.id = {agent})))) \
          AND EXISTS (SELECT 1 FROM agents a JOIN people p ON p.id = a.sponsor_id \
            WHERE a.id = {agent} AND a.revoked_at IS NULL AND a.paused_at IS NULL AND p.disabled_at IS NULL \
              AND a.connection_pending_until IS NULL \
              AND (a.expires_at IS NULL OR a.expires_at > ?)))"
    )
}

/// The condition that tuple row `t` is held by the person `person` (an SQL
/// expression with one parameter, used three times): theirs or a team's they
/// belong to, while they are enabled.
fn person_condition(person: &str) -> String {
    format!(
        "(t.subject = {person} OR t.subject IN (SELECT m.team_id || '#member' FROM team_members m WHERE m.person_id = {person})) \
         AND EXISTS (SELECT 1 FROM people p WHERE p.id = {person} AND p.disabled_at IS NULL)"
    )
}

/// `SELECT held`: 1 when `holder` holds `relation` on `object`, else 0.
pub fn holds(holder: &Holder, relation: Relation, object: &str) -> Statement {
    let (condition, holder_parameters) = holder_condition(holder);
    let mut parameters: Vec<Value> = vec![relation.name().into(), object.into()];
    parameters.extend(holder_parameters);
    Statement {
        sql: format!(
            "SELECT EXISTS (SELECT 1 FROM relation_tuples t WHERE t.relation = ? AND t.object = ? AND {condition}) AS held"
        )
        .into(),
        parameters,
    }
}

/// The SQL expression "1 when `holder` holds `relation` on the object in the
/// SQL expression `object`, else 0", with its parameters, for a query that
/// asks it per row (with `Holder::ActorIn`, of an actor named in a column).
pub fn holds_in_sql(holder: &Holder, relation: Relation, object: &str) -> (String, Vec<Value>) {
    let (condition, holder_parameters) = holder_condition(holder);
    let mut parameters: Vec<Value> = vec![relation.name().into()];
    parameters.extend(holder_parameters);
    (
        format!(
            "EXISTS (SELECT 1 FROM relation_tuples t WHERE t.relation = ? AND t.object = {object} AND {condition})"
        ),
        parameters,
    )
}

/// `SELECT relation`: every relation `holder` holds on `object`, one row each.
pub fn relations_on(holder: &Holder, object: &str) -> Statement {
    let (condition, holder_parameters) = holder_condition(holder);
    let mut parameters: Vec<Value> = vec![object.into()];
    parameters.extend(holder_parameters);
    Statement {
        sql: format!("SELECT DISTINCT t.relation FROM relation_tuples t WHERE t.object = ? AND {condition}").into(),
        parameters,
    }
}

/// The mailboxes where `holder` holds every one of `all_of` and (when not empty)
/// one of `any_of`, with every relation it holds on each (`held`,
/// comma-separated), ordered by address.
pub fn mailboxes_where(holder: &Holder, all_of: &[Relation], any_of: &[Relation]) -> Statement {
    let (condition, holder_parameters) = holder_condition(holder);
    let (visible, visible_parameters) = mailbox_ids_where(holder, all_of, any_of);
    let mut parameters: Vec<Value> = holder_parameters;
    parameters.extend(visible_parameters);
    Statement {
        sql: format!(
            "SELECT m.id, m.address, m.display_name, m.created_at, \
                    (SELECT group_concat(relation) FROM (SELECT DISTINCT t.relation FROM relation_tuples t \
                      WHERE t.object = m.id AND {condition} ORDER BY t.relation)) AS held \
             FROM mailboxes m WHERE m.id IN ({visible}) ORDER BY m.address"
        )
        .into(),
        parameters,
    }
}

/// Every mailbox, with every relation `holder` holds on each (`held`,
/// comma-separated, empty where nothing), ordered by address.
pub fn every_mailbox_with_held(holder: &Holder) -> Statement {
    let (condition, parameters) = holder_condition(holder);
    Statement {
        sql: format!(
            "SELECT m.id, m.address, m.display_name, m.created_at, \
                    (SELECT group_concat(relation) FROM (SELECT DISTINCT t.relation FROM relation_tuples t \
                      WHERE t.object = m.id AND {condition} ORDER BY t.relation)) AS held \
             FROM mailboxes m ORDER BY m.address"
        )
        .into(),
        parameters,
    }
}

/// `SELECT held`: each distinct set of mailbox relations `holder` holds on some
/// mailbox (comma-separated), one row per set rather than per mailbox, so the
/// answer stays a few rows however many mailboxes there are. Enough to know
/// whether a mailbox route could be completed anywhere, since a route needs its
/// relations together on one mailbox.
pub fn mailbox_relation_sets(holder: &Holder) -> Statement {
    let (condition, holder_parameters) = holder_condition(holder);
    let mailbox_relations: Vec<Value> = Relation::ALL
        .iter()
        .filter(|relation| relation.object_kind() == ObjectKind::Mailbox)
        .map(|relation| Value::from(relation.name()))
        .collect();
    let placeholders = vec!["?"; mailbox_relations.len()].join(", ");
    let mut parameters = mailbox_relations;
    parameters.extend(holder_parameters);
    Statement {
        sql: format!(
            "SELECT DISTINCT held FROM ( \
               SELECT object, group_concat(relation) AS held FROM ( \
                 SELECT DISTINCT t.object, t.relation FROM relation_tuples t \
                 WHERE t.relation IN ({placeholders}) AND {condition} ORDER BY t.object, t.relation) \
               GROUP BY object)"
        )
        .into(),
        parameters,
    }
}

/// The SQL expression "every relation the person in column `person` holds on the
/// object in column `object`, comma-separated" (no parameters), for a query
/// that reads, per row, what a butler's sponsor holds on its mailbox.
pub fn relations_of_person_in(person: &str, object: &str) -> String {
    format!(
        "(SELECT group_concat(relation) FROM (SELECT DISTINCT t.relation FROM relation_tuples t \
           WHERE t.object = {object} AND {} ORDER BY t.relation))",
        person_condition(person)
    )
}

/// Every tuple granted to an agent, for the administrator's view of agents.
pub fn granted_to_agents() -> Statement {
    Statement::new(
        "SELECT subject, relation, object, granted_at, granted_by FROM relation_tuples \
         WHERE subject LIKE 'agt\\_%' ESCAPE '\\' ORDER BY subject, object, relation",
    )
}

/// The SQL subquery "ids of the mailboxes where `holder` holds every one of
/// `all_of` and (when not empty) one of `any_of`", with its parameters, for a
/// query that filters rows by it. With neither, it names no mailbox.
pub fn mailbox_ids_where(holder: &Holder, all_of: &[Relation], any_of: &[Relation]) -> (String, Vec<Value>) {
    let (condition, holder_parameters) = holder_condition(holder);
    let mut clauses = Vec::new();
    let mut parameters: Vec<Value> = Vec::new();
    let groups = all_of.iter().map(std::slice::from_ref).chain((!any_of.is_empty()).then_some(any_of));
    for relations in groups {
        let placeholders = vec!["?"; relations.len()].join(", ");
        clauses.push(format!(
            "m.id IN (SELECT t.object FROM relation_tuples t WHERE t.relation IN ({placeholders}) AND {condition})"
        ));
        parameters.extend(relations.iter().map(|relation| Value::from(relation.name())));
        parameters.extend(holder_parameters.iter().cloned());
    }
    if clauses.is_empty() {
        clauses.push("0".to_string());
    }
    (format!("SELECT m.id FROM mailboxes m WHERE {}", clauses.join(" AND ")), parameters)
}

/// `SELECT held`: whether `holder` administers the node.
pub fn is_administrator(holder: &Holder) -> Statement {
    holds(holder, Relation::OrgAdmin, ORGANIZATION_OBJECT)
}

/// `SELECT held`: whether `holder` is the sponsor of the agent `agent_id` or
/// administers the node: who may watch and set an agent's messaging. Only a
/// person sponsors; an agent's administration is intersected as everywhere.
pub fn sponsors_or_administers(holder: &Holder, agent_id: &str) -> Statement {
    let (condition, holder_parameters) = holder_condition(holder);
    let sponsor = match holder {
        Holder::Person(person_id) => person_id.as_str(),
        Holder::Agent { .. } | Holder::SponsorOf(_) | Holder::ActorIn { .. } => "",
    };
    let mut parameters: Vec<Value> =
        vec![agent_id.into(), sponsor.into(), Relation::OrgAdmin.name().into(), ORGANIZATION_OBJECT.into()];
    parameters.extend(holder_parameters);
    Statement {
        sql: format!(
            "SELECT (EXISTS (SELECT 1 FROM agents a WHERE a.id = ? AND a.sponsor_id = ?)                OR EXISTS (SELECT 1 FROM relation_tuples t WHERE t.relation = ? AND t.object = ? AND {condition})) AS held"
        )
        .into(),
        parameters,
    }
}

/// The SQL expression "1 when the person in the SQL column `person` sponsors
/// the live (unrevoked) agent in the SQL column `agent`, or administers the
/// node, while enabled", with its parameters, asked per row at `now_ms`: whether
/// whoever subscribed a webhook to an agent may still be told of its changes.
pub fn sponsors_or_administers_in_sql(person: &'static str, agent: &str, now_ms: i64) -> (String, Vec<Value>) {
    let (condition, parameters) = holder_condition(&Holder::ActorIn { column: person, now_ms });
    let mut all: Vec<Value> = vec![Relation::OrgAdmin.name().into(), ORGANIZATION_OBJECT.into()];
    all.extend(parameters);
    (
        format!(
            "(EXISTS (SELECT 1 FROM agents a JOIN people p ON p.id = a.sponsor_id \
               WHERE a.id = {agent} AND a.sponsor_id = {person} AND a.revoked_at IS NULL AND p.disabled_at IS NULL) \
             OR EXISTS (SELECT 1 FROM relation_tuples t WHERE t.relation = ? AND t.object = ? AND {condition}))"
        ),
        all,
    )
}

/// Every administrator's person id: people who hold `org.admin` directly or through
/// a team, and are not disabled.
pub fn administrators() -> Statement {
    Statement::new(
        "SELECT p.id FROM people p WHERE p.disabled_at IS NULL AND EXISTS ( \
           SELECT 1 FROM relation_tuples t WHERE t.relation = 'org.admin' AND t.object = 'org' \
             AND (t.subject = p.id OR t.subject IN \
                  (SELECT m.team_id || '#member' FROM team_members m WHERE m.person_id = p.id))) \
         ORDER BY p.id",
    )
}

/// The SQL condition that an enabled person administers the node, leaving out
/// what `losing` takes away, with its parameters. With nothing left out it is the
/// state as it stands (`IS NOT NULL` and `IS NULL` make the empty exclusions true).
fn administrator_remains(losing: Losing<'_>) -> Statement {
    let (team, member) = losing.membership.unzip();
    Statement::new(
        "EXISTS (SELECT 1 FROM people p WHERE p.disabled_at IS NULL AND p.id IS NOT ? AND EXISTS ( \
           SELECT 1 FROM relation_tuples t WHERE t.relation = 'org.admin' AND t.object = 'org' \
             AND t.subject IS NOT ? \
             AND (t.subject = p.id OR t.subject IN \
                  (SELECT m.team_id || '#member' FROM team_members m \
                   WHERE m.person_id = p.id AND NOT (m.team_id IS ? AND m.person_id IS ?)))))",
    )
    .bind(losing.person)
    .bind(losing.tuple_subject)
    .bind(team)
    .bind(member)
}

/// The condition, for a write guard, that after a change at least one enabled
/// person still administers the node. It holds the invariant under races.
pub fn a_live_administrator_remains() -> Statement {
    administrator_remains(Losing::default())
}

/// `SELECT held`: whether an enabled person would still administer the node
/// without what `losing` takes away. Asked in a handler's first read, so the
/// common refusal costs no failed commit; the guard still holds under races.
pub fn an_administrator_would_remain(losing: Losing<'_>) -> Statement {
    let condition = administrator_remains(losing);
    Statement { sql: format!("SELECT {} AS held", condition.sql).into(), parameters: condition.parameters }
}

/// Whether any administrator exists at all, disabled or not: the fact that closes
/// `POST /api/setup` for ever.
pub fn any_administrator_ever() -> Statement {
    Statement::new(
        "SELECT EXISTS (SELECT 1 FROM relation_tuples WHERE relation = 'org.admin' AND object = 'org') AS held",
    )
}

/// Tuples, optionally only one subject's or only on one object, in a stable order.
pub fn list(subject: Option<&str>, object: Option<&str>) -> Statement {
    Statement::new(
        "SELECT subject, relation, object, granted_at, granted_by FROM relation_tuples \
         WHERE (?1 IS NULL OR subject = ?1) AND (?2 IS NULL OR object = ?2) \
         ORDER BY object, relation, subject",
    )
    .bind(subject)
    .bind(object)
}

/// The one tuple `(subject, relation, object)`, if held.
pub fn find(subject: &str, relation: Relation, object: &str) -> Statement {
    Statement::new(
        "SELECT subject, relation, object, granted_at, granted_by FROM relation_tuples \
         WHERE subject = ?1 AND relation = ?2 AND object = ?3",
    )
    .bind(subject)
    .bind(relation.name())
    .bind(object)
}

/// Grants a tuple; granting one already held changes nothing.
pub fn grant(subject: &str, relation: Relation, object: &str, granted_at: i64, granted_by: &str) -> Statement {
    Statement::new(
        "INSERT INTO relation_tuples (subject, relation, object, granted_at, granted_by) \
         VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (subject, relation, object) DO NOTHING",
    )
    .bind(subject)
    .bind(relation.name())
    .bind(object)
    .bind(granted_at)
    .bind(granted_by)
}

/// Forgets every tuple held by the subjects `subjects` selects (SQL selecting
/// ids, with its `parameters`): for agents being removed whole, which nothing
/// may go on naming as a holder.
pub fn forget_held_by(subjects: &str, parameters: Vec<Value>) -> Statement {
    Statement { sql: format!("DELETE FROM relation_tuples WHERE subject IN ({subjects})").into(), parameters }
}

/// Revokes a tuple.
pub fn revoke(subject: &str, relation: Relation, object: &str) -> Statement {
    Statement::new("DELETE FROM relation_tuples WHERE subject = ?1 AND relation = ?2 AND object = ?3")
        .bind(subject)
        .bind(relation.name())
        .bind(object)
}
