//! Presence: who is reading or writing a reply in a conversation now, told to
//! the others listening to its mailbox, so two people do not answer the same
//! customer twice.
//!
//! A listener says what it is doing in a frame of its own
//! (`{"presence":"writing","object":"thr_…"}`); its hub tells every other
//! listener on the mailbox who (the opener's id) is doing it where. Presence is
//! ids and a word, never content; it is not stored and not recorded: it lasts
//! while the stream does, and a stream that closes is told as gone idle. Only
//! a mailbox's stream carries it, and every listener there may read the
//! mailbox (the route admitted it, and asks again whenever access changes).

use serde::{Deserialize, Serialize};

use crate::core::ids::{IdKind, is_id_of};

/// What a listener says it is doing in a conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Activity {
    /// Has the conversation open.
    Reading,
    /// Is writing a reply to it.
    Writing,
    /// Has left it.
    Idle,
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
    /// which topic, when.
    pub fn told(&self, actor: &str, topic: &str, at: i64) -> String {
        serde_json::json!({
            "kind": "presence",
            "object": self.object,
            "actor": actor,
            "activity": self.presence,
            "topic": topic,
            "at": at,
        })
        .to_string()
    }

    /// The same presence, gone idle: what a stream's close tells of it.
    pub fn gone_idle(&self) -> Presence {
        Presence { presence: Activity::Idle, object: self.object.clone() }
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
    fn what_others_are_told_is_who_what_and_where_and_a_close_is_idle() {
        let writing = Presence { presence: Activity::Writing, object: THREAD.into() };
        let told: serde_json::Value = serde_json::from_str(&writing.told("usr_1", "mailbox:mbx_1", 7)).unwrap();
        assert_eq!(told["kind"], "presence");
        assert_eq!((told["actor"].as_str(), told["activity"].as_str()), (Some("usr_1"), Some("writing")));
        assert_eq!(
            (told["object"].as_str(), told["topic"].as_str(), told["at"].as_i64()),
            (Some(THREAD), Some("mailbox:mbx_1"), Some(7))
        );
        assert_eq!(writing.gone_idle().presence, Activity::Idle);
    }
}
