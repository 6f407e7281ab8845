//! What the listening routes refuse, and how each refusal is worded.

use crate::core::refusal::Refusal;

/// Why a listening route did not open a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveError {
    /// The request is not a WebSocket upgrade.
    NotAnUpgrade,
}

impl From<LiveError> for Refusal {
    fn from(error: LiveError) -> Refusal {
        match error {
            LiveError::NotAnUpgrade => Refusal::new(
                426,
                "upgrade_required",
                "This route opens a WebSocket and answers nothing else.",
                "The request did not ask to upgrade the connection (`Upgrade: websocket`).",
                "Open it with a WebSocket client (in a browser, `new WebSocket(url)`); to read what changed, use the ordinary routes.",
            ),
        }
    }
}
