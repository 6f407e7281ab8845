//! The checks every writer of an event's text makes: one line within its
//! limit, and a deep link that is an https address.

use mailroom_contract::api::{DEEP_LINK_MAXIMUM, DONE_LABEL_MAXIMUM, EVENT_TITLE_MAXIMUM, SOURCE_KEY_MAXIMUM};

use super::errors::ReminderError;

/// One line of text, trimmed: refused when it holds a control character or is
/// longer than `maximum` characters, or empty when `required`.
pub(crate) fn line(field: &'static str, text: &str, maximum: usize, required: bool) -> Result<String, ReminderError> {
    let text = text.trim();
    if let Some(control) = crate::core::text::first_direction_control(text) {
        return Err(ReminderError::DirectionControl { field, control });
    }
    let refused = ReminderError::InvalidText { field, maximum, required };
    if text.chars().any(char::is_control) || text.chars().count() > maximum || (required && text.is_empty()) {
        return Err(refused);
    }
    Ok(text.to_string())
}

/// An optional line: absent or empty is none.
pub(crate) fn optional_line(
    field: &'static str,
    text: Option<&str>,
    maximum: usize,
) -> Result<Option<String>, ReminderError> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => line(field, text, maximum, false).map(Some),
    }
}

/// A deep link: an https address without spaces or control characters.
pub(crate) fn deep_link(text: Option<&str>) -> Result<Option<String>, ReminderError> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(link) => {
            let host = link.strip_prefix("https://").unwrap_or_default();
            let acceptable = link.len() <= DEEP_LINK_MAXIMUM
                && !host.is_empty()
                && !host.starts_with('/')
                && !link.chars().any(|c| c.is_whitespace() || c.is_control());
            if acceptable { Ok(Some(link.to_string())) } else { Err(ReminderError::InvalidDeepLink) }
        }
    }
}

/// The limits of an event's text fields, stated once for every writer.
pub(crate) const TITLE: (&str, usize) = ("title", EVENT_TITLE_MAXIMUM);
pub(crate) const SUBTITLE: (&str, usize) = ("subtitle", EVENT_TITLE_MAXIMUM);
pub(crate) const DONE_LABEL: (&str, usize) = ("done_label", DONE_LABEL_MAXIMUM);
pub(crate) const SOURCE_REF: (&str, usize) = ("source_ref", SOURCE_KEY_MAXIMUM);
pub(crate) const TOPIC: (&str, usize) = ("topic", SOURCE_KEY_MAXIMUM);
