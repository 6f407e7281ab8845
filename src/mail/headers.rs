//! A received message's header block as its bytes have it: every field in
//! order, topmost first, unfolded, and where the body begins.
//!
//! mail-parser reads a message for what it says (one From, decoded names); a
//! few questions are about how it was written instead: how many From lines it
//! has, which `Authentication-Results` the receiving service put on top
//! (`trust`), and what its content is, the trace the mail servers on the way
//! added left out (`inbound`'s digest). Those read the fields here. Plain
//! functions over bytes: no storage, no parsing beyond the header block.

/// The header fields of a raw message, in order (topmost first), unfolded:
/// `(name, value)`, both trimmed. Stops at the first empty line; a line that is
/// neither a field nor a continuation is skipped.
pub fn fields(raw: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(header_block(raw));
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.starts_with(' ') || line.starts_with('\t') {
            if let Some((_, value)) = fields.last_mut() {
                value.push(' ');
                value.push_str(line.trim());
            }
            continue;
        }
        if let Some((name, value)) = line.split_once(':') {
            fields.push((name.trim().to_string(), value.trim().to_string()));
        }
    }
    fields
}

/// How many fields named `name` (compared without regard to case) the header
/// block has.
pub fn count(fields: &[(String, String)], name: &str) -> usize {
    fields.iter().filter(|(field, _)| field.eq_ignore_ascii_case(name)).count()
}

/// The header block: everything before the first empty line, or all of it when
/// there is none.
fn header_block(raw: &[u8]) -> &[u8] {
    &raw[..empty_line(raw).map_or(raw.len(), |(start, _)| start)]
}

/// The body: everything after the first empty line (empty when there is none).
pub fn body(raw: &[u8]) -> &[u8] {
    empty_line(raw).map_or(&[], |(_, end)| &raw[end..])
}

/// Where the first empty line begins and ends, if there is one.
fn empty_line(raw: &[u8]) -> Option<(usize, usize)> {
    let mut start = 0;
    while start < raw.len() {
        let end = raw[start..].iter().position(|byte| *byte == b'\n').map_or(raw.len(), |at| start + at + 1);
        if matches!(&raw[start..end], b"\n" | b"\r\n") {
            return Some((start, end));
        }
        start = end;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_unfolded_in_order_and_stop_at_the_body() {
        let raw = b"From: a@b.example\r\nSubject: one\r\n\ttwo\r\nfrom: c@d.example\r\n\r\nBody: not a field\r\n";
        let read = fields(raw);
        assert_eq!(read.len(), 3);
        assert_eq!(read[1], ("Subject".to_string(), "one two".to_string()));
        assert_eq!(count(&read, "From"), 2, "names compared without regard to case");
        assert_eq!(body(raw), b"Body: not a field\r\n");
        assert_eq!(body(b"From: a@b.example\n"), b"", "no empty line, no body");
    }
}
