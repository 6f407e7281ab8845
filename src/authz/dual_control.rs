//! Who stands on an actor's side of dual control: the questions "may this person
//! be the second person for what that actor did?" asked in SQL, for the queries
//! that list what waits for a second person (the approval queue, the feed).
//!
//! An actor's side is the actor itself and, for an agent, its sponsor (whose
//! authority it acted under), whoever minted it and whoever handed it its
//! credential (either may be holding it). The decision itself re-checks the same
//! rule from the send's row (`mail::sends`), and a test holds the two together.
//! The SQL itself is built in authz's store (`store::access`).

use super::store::access;

/// The SQL condition that the person `person` (an SQL expression, used four
/// times: a positional `?` is bound four times) is not on the side of the actor in column `actor`: so the
/// person may be the second person for what the actor did. An absent actor has
/// no side.
pub fn not_on_the_side_of(actor: &str, person: &str) -> String {
    access::not_on_the_side_of(actor, person)
}
