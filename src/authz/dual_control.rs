//! Who stands on an actor's side of dual control: the questions "may this person
//! be the second person for what that actor did?" asked in SQL, for the queries
//! that list what waits for a second person (the approval queue, the feed).
//!
//! An actor's side is the actor itself and, for an agent, its sponsor (whose
//! authority it acted under), whoever minted it and whoever handed it its
//! credential (either may be holding it). The decision itself re-checks the same
//! rule from the send's row (`mail::sends`), and a test holds the two together.

/// The SQL condition that the person `person` (an SQL expression, used four
/// times: a positional `?` is bound four times) is not on the side of the actor in column `actor`: so the
/// person may be the second person for what the actor did. An absent actor has
/// no side.
pub fn not_on_the_side_of(actor: &str, person: &str) -> String {
    format!(
        "({actor} IS NULL OR ({actor} != {person} AND NOT EXISTS (SELECT 1 FROM agents side \
           WHERE side.id = {actor} AND ({person} = side.sponsor_id OR {person} = side.created_by \
             OR {person} = COALESCE(side.credential_issued_by, '')))))"
    )
}
