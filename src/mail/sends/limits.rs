//! How much one send may hold: recipients, subject, text, references. The
//! refusals in `errors` name these limits, and drafting holds to them.

/// The most recipients (To and Cc together) one send may have.
pub const MAXIMUM_RECIPIENTS: usize = 50;
/// The most recipients a draft may hold while its writer trims it to
/// `MAXIMUM_RECIPIENTS`: everything a reply to all can gather, a received
/// message's Reply-To, To and Cc as a receipt keeps each of them.
pub const MAXIMUM_DRAFT_RECIPIENTS: usize = 3 * crate::mail::limits::RECIPIENTS_KEPT;
/// The longest subject, in characters (RFC 5322's line limit).
pub const MAXIMUM_SUBJECT_CHARACTERS: usize = 998;
/// The longest body, in bytes.
pub const MAXIMUM_TEXT_BYTES: usize = 256 * 1024;
/// How many References a reply carries: the most recent ones.
pub(super) const MAXIMUM_REFERENCES: usize = 20;
