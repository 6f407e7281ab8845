//! Presence: who is reading or writing a reply in a conversation now, told to
//! the others listening to its mailbox, so two people do not answer the same
//! customer twice.
//!
//! A listener says what it is doing in a frame of its own
//! (`{"presence":"writing","object":"thr_…"}`); its hub tells every other
//! listener on the mailbox who (the opener's id) is doing it where: the most
//! any of that person's streams says (`activity_of`), so a second tab reading
//! does not hide the first one writing. Presence is ids and a word, never
//! content; it is not stored and not recorded: it lasts while the stream does,
//! and a person whose last stream in a conversation closes is told as idle. Only
//! a mailbox's stream carries it, and every listener there may read the
//! mailbox (the route admitted it, and asks again whenever access changes).

use serde::{Deserialize, Serialize};

use crate::core::ids::{IdKind, is_id_of};

/// What a listener says it is doing in a conversation, least first: a
/// person in several tabs is doing the most any of them says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Activity {
    /// Has left it.
    Idle,
    /// Has the conversation open.
    Reading,
    /// Is writing a reply to it.
    Writing,
}

/// What `actor` is doing in `object` across every stream on a mailbox
/// (`streams`: each stream's opener and its presence), as the others are
/// told it: the most any of its streams says, idle when none is there.
pub fn activity_of<'a>(
    streams: impl IntoIterator<Item = (&'a str, Option<&'a Presence>)>,
    actor: &str,
    object: &str,
) -> Activity {
    streams
        .into_iter()
        .filter(|(opener, _)| *opener == actor)
        .filter_map(|(_, presence)| presence.filter(|presence| presence.object == object))
        .map(|presence| presence.presence)
        .max()
        .unwrap_or(Activity::Idle)
}

/// A listener's presence in one conversation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Presence {
    pub presence: Activity,
    /// The conversation (`thr_…`).
    pub object: String,
}

/// The largest presence frame a hub reads: anything longer is not one.
const MAXIMUM_FRAME_BYTES: usize = 256;

impl Presence {
    /// A listener's frame as a presence, if it is one: a known activity in a
    /// conversation named by a well-formed id. Anything else is not read.
    pub fn from_frame(frame: &str) -> Option<Presence> {
        if frame.len() > MAXIMUM_FRAME_BYTES {
            return None;
        }
        let presence: Presence = serde_json::from_str(frame).ok()?;
        is_id_of(&presence.object, IdKind::Thread).then_some(presence)
    }

    /// The frame the other listeners receive: who is doing what where, on
    /// which topic, when. (`Presence` is here what is told, the combined
    /// activity of the actor's streams: see `activity_of`.)
    pub fn told(&self, actor: &str, actor_name: Option<&str>, topic: &str, at: i64) -> String {
        serde_json::json!({
            "kind": "presence",
            "object": self.object,
            "actor": actor,
            "actor_name": actor_name,
            "activity": self.presence,
            "topic": topic,
            "at": at,
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const THREAD: &str = "thr_01J00000000000000000000000";

    #[test]
    fn only_a_known_activity_in_a_well_named_conversation_is_presence() {
        let writing = Presence::from_frame(&format!(r#"{{"presence":"writing","object":"{THREAD}"}}"#));
        assert_eq!(writing, Some(Presence { presence: Activity::Writing, object: THREAD.into() }));
        for frame in [
            r#"{"presence":"typing","object":"thr_01J00000000000000000000000"}"#.to_string(),
            r#"{"presence":"writing","object":"rcp_01J00000000000000000000000"}"#.to_string(),
            r#"{"presence":"writing","object":"thr_<script>"}"#.to_string(),
            r#"{"presence":"writing"}"#.to_string(),
            "not json".to_string(),
            format!(r#"{{"presence":"writing","object":"{THREAD}","padding":"{}"}}"#, "x".repeat(300)),
        ] {
            assert_eq!(Presence::from_frame(&frame), None, "{frame}");
        }
    }

    #[test]
    fn one_person_in_several_streams_is_doing_the_most_any_says_and_idle_only_when_none_is_there() {
        const OTHER: &str = "thr_01J00000000000000000000001";
        let writing = Presence { presence: Activity::Writing, object: THREAD.into() };
        let reading = Presence { presence: Activity::Reading, object: THREAD.into() };
        let elsewhere = Presence { presence: Activity::Writing, object: OTHER.into() };
        let streams = [
            ("usr_wren", Some(&reading)),
            ("usr_wren", Some(&writing)),
            ("usr_abe", Some(&writing)),
            ("usr_wren", None),
        ];
        assert_eq!(activity_of(streams, "usr_wren", THREAD), Activity::Writing);
        assert_eq!(
            activity_of([("usr_wren", Some(&reading)), ("usr_wren", Some(&elsewhere))], "usr_wren", THREAD),
            Activity::Reading
        );
        assert_eq!(
            activity_of([("usr_wren", Some(&elsewhere)), ("usr_abe", Some(&writing))], "usr_wren", THREAD),
            Activity::Idle
        );
        assert_eq!(activity_of([], "usr_wren", THREAD), Activity::Idle);
    }

    #[test]
    fn what_others_are_told_is_who_what_and_where() {
        let writing = Presence { presence: Activity::Writing, object: THREAD.into() };
        let told: serde_json::Value =
            serde_json::from_str(&writing.told("usr_1", Some("Wren"), "mailbox:mbx_1", 7)).unwrap();
        assert_eq!(told["actor_name"], "Wren");
        assert_eq!(told["kind"], "presence");
        assert_eq!((told["actor"].as_str(), told["activity"].as_str()), (Some("usr_1"), Some("writing")));
        assert_eq!(
            (told["object"].as_str(), told["topic"].as_str(), told["at"].as_i64()),
            (Some(THREAD), Some("mailbox:mbx_1"), Some(7))
        );
    }
}
