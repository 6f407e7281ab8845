//! The bytes mail-parser is handed for a received message: the message itself,
//! or, when one of its multiparts' boundaries is written where it delimits
//! nothing, a copy with the boundaries renamed. A workaround, owned here alone,
//! for a bug in mail-parser 0.11 (stalwartlabs/mail-parser issue 156, fixed in
//! 1.0); decision 0042.
//!
//! RFC 2046 §5.1.1: a boundary delimits a part only as a whole line, `--`, the
//! boundary, `--` if it closes the multipart, optional spaces or tabs, the
//! line's end. mail-parser 0.11 takes `--` and the boundary anywhere for a
//! delimiter, mid-line and followed by anything (`seek_next_part`, `mime_part`,
//! `seek_part_end` and its base64 and quoted-printable decoders all match so):
//! a body line such as `see --abc here`, or `--abcdef` where the boundary is
//! `abc`, cuts the part it is in short and has what follows read as another
//! part's header.
//!
//! A boundary is a name and means nothing: any other that occurs nowhere in the
//! message says the same. So when the boundary the parser is searching for is
//! written where it delimits nothing, every multipart's boundary is renamed, in
//! its `Content-Type` field and in each line that delimits it and nowhere else,
//! to a name occurring nowhere in the message. The parser then finds exactly
//! RFC 2046's delimiters, and reads the same parts, headers and contents. A
//! message with nothing ambiguous, nearly every one, is handed over as it is.
//! Either way the original is what is stored and hashed, and a part's bytes are
//! served from it (`as_sent`).
//!
//! What the parser searches for is followed as mail-parser 0.11 does it: the
//! innermost open multipart's boundary, through part bodies and attached
//! messages read in place. What it does not read by boundaries is not looked
//! at: header blocks, what follows the outermost multipart's close, a
//! `message/rfc822` part in base64 or quoted-printable (which RFC 2046 §5.2.1
//! does not allow). Left as they are: a message whose boundary field cannot be
//! found as the parser read it (escaped in quotes, split by RFC 2231), and one
//! whose multiparts do not nest (one delimited by a line of one around it
//! before its own close), whose reading is the parser's own either way.
//!
//! Remove this module, and hand mail-parser the message itself, once
//! mail-parser 1.0 can be used: 1.0.1 needs Rust 1.98, and the toolchain here
//! is 1.95. The tests of the bad cases stay, as tests of the parser.

use std::collections::HashMap;
use std::ops::Range;

use mail_parser::parsers::MessageStream;
use mail_parser::{HeaderName, HeaderValue, MessageParser};
use memchr::memmem::Finder;
use sha2::{Digest, Sha256};

use crate::core::crypto::hex;
use crate::mail::limits::MIME_DEPTH;

/// A received message as mail-parser is to read it.
pub struct ForTheParser<'a> {
    raw: &'a [u8],
    renamed: Option<Renamed>,
}

/// The message with its boundaries renamed, and where.
struct Renamed {
    bytes: Vec<u8>,
    /// Each name written, in order: where it replaced a boundary in the
    /// original, and where it starts in `bytes`.
    names: Vec<(Range<usize>, usize)>,
    /// The length of every name.
    length: usize,
}

impl<'a> ForTheParser<'a> {
    /// `raw`, with its multiparts' boundaries renamed when one is written where
    /// the parser would take it for a delimiter of a part and it is not.
    pub fn of(raw: &'a [u8]) -> ForTheParser<'a> {
        let renamed = survey(raw).filter(|survey| survey.misread).and_then(|survey| renamed(raw, &survey.multiparts));
        ForTheParser { raw, renamed }
    }

    /// The bytes to parse.
    pub fn bytes(&self) -> &[u8] {
        self.renamed.as_ref().map_or(self.raw, |renamed| &renamed.bytes)
    }

    /// `contents`, read from `bytes`, as the message was sent: the same span of
    /// the original when it is a span of `bytes` (an attached message holds its
    /// own boundaries), else `contents` itself (decoded, so holding none).
    pub fn as_sent<'s>(&'s self, contents: &'s [u8]) -> &'s [u8] {
        let Some(renamed) = &self.renamed else { return contents };
        let within = renamed.bytes.as_ptr_range();
        if contents.is_empty() || !within.contains(&contents.as_ptr()) {
            return contents;
        }
        let start = contents.as_ptr() as usize - within.start as usize;
        let end = start + contents.len();
        self.raw.get(renamed.original(start)..renamed.original(end)).unwrap_or(contents)
    }
}

impl Renamed {
    /// Where `at`, a position in `bytes`, is in the original: past each name
    /// before it by the boundary it replaced; within a name, where it started.
    fn original(&self, at: usize) -> usize {
        let before = self.names.partition_point(|(_, start)| *start < at);
        match before.checked_sub(1).map(|last| &self.names[last]) {
            Some((replaced, start)) if at < start + self.length => replaced.start,
            Some((replaced, start)) => replaced.end + (at - start - self.length),
            None => at,
        }
    }
}

/// A multipart of the message, as the walk found it.
struct Multipart {
    boundary: Vec<u8>,
    /// Where its `boundary` parameter's value is written, when it is written as
    /// the parser read it.
    field: Option<Range<usize>>,
    /// Where the boundary is in each line that delimits it (after the `--`).
    delimiters: Vec<usize>,
    /// A multipart/digest, whose parts are messages unless they say otherwise.
    digest: bool,
}

/// The message's multiparts, and whether the parser would misread them: a
/// boundary written where the parser would search for it and it delimits
/// nothing, in multiparts that nest as RFC 2046 says.
struct Survey {
    multiparts: Vec<Multipart>,
    misread: bool,
}

/// What an entity (the message, a part, or a message attached unencoded) is.
enum Kind {
    Multipart(Multipart),
    /// An attached message the parser reads in place: its own header block
    /// follows.
    Message,
    /// Anything else: a body the parser reads up to the next delimiter.
    Leaf,
}

/// The multiparts open at a point of the message, innermost last, and their
/// places among them by boundary.
#[derive(Default)]
struct Open {
    multiparts: Vec<usize>,
    by_boundary: HashMap<Vec<u8>, Vec<usize>>,
}

impl Open {
    fn push(&mut self, index: usize, boundary: &[u8]) {
        self.by_boundary.entry(boundary.to_vec()).or_default().push(self.multiparts.len());
        self.multiparts.push(index);
    }

    /// Closes every multipart from `depth` in.
    fn close_from(&mut self, depth: usize, multiparts: &[Multipart]) {
        while self.multiparts.len() > depth {
            if let Some(index) = self.multiparts.pop()
                && let Some(depths) = self.by_boundary.get_mut(&multiparts[index].boundary)
            {
                depths.pop();
            }
        }
    }
}

/// The message's structure as mail-parser 0.11 reads it, delimited as RFC 2046
/// says: one pass over the lines of the bodies it reads by boundaries. `None`
/// when multiparts nest deeper than `MIME_DEPTH` (the message is refused for
/// that: `limits::refuse_nesting`) or not at all.
fn survey(raw: &[u8]) -> Option<Survey> {
    let parser = MessageParser::default();
    let mut multiparts: Vec<Multipart> = Vec::new();
    let mut misread = false;
    let mut open = Open::default();
    // The search for the innermost multipart's `--boundary`, and whose.
    let mut searching: Option<(usize, Finder<'static>)> = None;
    // Where a header block starts, and whether it is a part of a digest.
    let mut headers_at = Some((0, false));
    let mut at = 0;
    loop {
        if let Some((start, in_digest)) = headers_at.take() {
            let Some((kind, body)) = entity(&parser, raw, start, in_digest) else { break };
            at = body;
            match kind {
                Kind::Multipart(multipart) => {
                    if open.multiparts.len() >= MIME_DEPTH {
                        return None;
                    }
                    open.push(multiparts.len(), &multipart.boundary);
                    multiparts.push(multipart);
                }
                Kind::Message => {
                    headers_at = Some((body, false));
                    continue;
                }
                Kind::Leaf => {}
            }
        }
        // Once the outermost multipart is closed the parser reads no further.
        let Some(&innermost) = open.multiparts.last() else { break };
        if at >= raw.len() {
            break;
        }
        let end = memchr::memchr(b'\n', &raw[at..]).map_or(raw.len(), |newline| at + newline + 1);
        let delimiter = delimits(&raw[at..end], &open.by_boundary);
        if !misread {
            // The parser searches for the innermost multipart's boundary,
            // anywhere: `--` and the boundary, which holds no line break, so
            // a match starts and ends within the line.
            if searching.as_ref().is_none_or(|(multipart, _)| *multipart != innermost) {
                let needle = [b"--".as_slice(), &multiparts[innermost].boundary].concat();
                searching = Some((innermost, Finder::new(&needle).into_owned()));
            }
            let delimits_innermost = delimiter.is_some_and(|(depth, _)| open.multiparts[depth] == innermost);
            misread = searching.as_ref().is_some_and(|(_, finder)| {
                finder.find_iter(&raw[at..end]).any(|found| !(found == 0 && delimits_innermost))
            });
        }
        if let Some((depth, closes)) = delimiter {
            if depth + 1 < open.multiparts.len() {
                // A line of a multipart around the innermost one, before that
                // one's close: they do not nest.
                return None;
            }
            let index = open.multiparts[depth];
            multiparts[index].delimiters.push(at + 2);
            if closes {
                open.close_from(depth, &multiparts);
            } else {
                headers_at = Some((end, multiparts[index].digest));
            }
        }
        at = end;
    }
    Some(Survey { multiparts, misread })
}

/// The entity whose header block starts at `start`: what it is, and where its
/// body starts; `None` when no header block ends there. Read by mail-parser's
/// own header parser, taking the fields it acts on (the last of each).
fn entity(parser: &MessageParser, raw: &[u8], start: usize, in_digest: bool) -> Option<(Kind, usize)> {
    let mut stream = MessageStream::new(&raw[start..]);
    let mut headers = Vec::new();
    if !stream.parse_headers(parser, &mut headers) {
        return None;
    }
    let body = start + stream.offset();
    let last = |name: HeaderName<'_>| headers.iter().rev().find(|header| header.name == name);
    // What the parser reads as encoded; an attached message so is not read in place.
    let encoded = last(HeaderName::ContentTransferEncoding).is_some_and(|header| {
        matches!(&header.value, HeaderValue::Text(encoding)
            if encoding.eq_ignore_ascii_case("base64") || encoding.eq_ignore_ascii_case("quoted-printable"))
    });
    let Some(header) = last(HeaderName::ContentType) else {
        let kind = if in_digest && !encoded { Kind::Message } else { Kind::Leaf };
        return Some((kind, body));
    };
    let Some(value) = header.value.as_content_type() else { return Some((Kind::Leaf, body)) };
    let kind = match (value.ctype(), value.subtype(), value.attribute("boundary")) {
        ("multipart", subtype, Some(boundary)) if !boundary.is_empty() => {
            let field = start + header.offset_start as usize..start + header.offset_end as usize;
            Kind::Multipart(Multipart {
                boundary: boundary.as_bytes().to_vec(),
                field: parameter_value(raw, field, boundary.as_bytes()),
                delimiters: Vec::new(),
                digest: subtype == Some("digest"),
            })
        }
        ("message", Some("rfc822" | "global"), _) if !encoded => Kind::Message,
        _ => Kind::Leaf,
    };
    Some((kind, body))
}

/// Whether `line` delimits an open multipart (`by_boundary`: their depths by
/// boundary), which (the innermost so named), and whether it closes it. RFC
/// 2046 §5.1.1: `--`, the boundary, `--` to close, optional spaces and tabs,
/// the line's end. Looked up by name, so a line costs its own length however
/// many multiparts are open.
fn delimits(line: &[u8], by_boundary: &HashMap<Vec<u8>, Vec<usize>>) -> Option<(usize, bool)> {
    let line = line.strip_suffix(b"\n").map_or(line, |line| line.strip_suffix(b"\r").unwrap_or(line));
    let written = line.strip_prefix(b"--")?;
    let padding = written.iter().rev().take_while(|byte| matches!(byte, b' ' | b'\t')).count();
    let written = &written[..written.len() - padding];
    let innermost = |boundary: &[u8]| by_boundary.get(boundary).and_then(|depths| depths.last().copied());
    let delimiter = innermost(written).map(|depth| (depth, false));
    let close = written.strip_suffix(b"--").and_then(innermost).map(|depth| (depth, true));
    delimiter.into_iter().chain(close).max_by_key(|(depth, _)| *depth)
}

/// Where the value of the `boundary` parameter is written in the field at
/// `field`, when it is written as `boundary` (quoted or not); `None` when the
/// first such parameter holds anything else, escaped, or split (RFC 2231).
fn parameter_value(raw: &[u8], field: Range<usize>, boundary: &[u8]) -> Option<Range<usize>> {
    const NAME: &[u8] = b"boundary";
    let text = raw.get(field.clone())?;
    let name = (0..text.len()).find(|at| {
        text[*at..].get(..NAME.len()).is_some_and(|name| name.eq_ignore_ascii_case(NAME))
            && (*at == 0 || matches!(text[*at - 1], b';' | b' ' | b'\t' | b'\r' | b'\n'))
    })?;
    let blank = |at: usize| text[at..].iter().take_while(|byte| matches!(byte, b' ' | b'\t')).count();
    let mut at = name + NAME.len();
    at += blank(at);
    if text.get(at) != Some(&b'=') {
        return None;
    }
    at += 1;
    at += blank(at);
    let quoted = text.get(at) == Some(&b'"');
    let start = at + usize::from(quoted);
    let end = start + boundary.len();
    let after = text.get(end).copied();
    let ends = if quoted {
        after == Some(b'"')
    } else {
        after.is_none_or(|byte| matches!(byte, b';' | b' ' | b'\t' | b'\r' | b'\n' | b'('))
    };
    (text.get(start..end) == Some(boundary) && ends).then(|| field.start + start..field.start + end)
}

/// `raw` with every multipart's boundary renamed, in its field and its
/// delimiters: each distinct boundary to a name of its own, all of one length
/// (so none begins another) and of letters and digits (so none joins the `--`,
/// `=` or `"` written before it into another), after a prefix that occurs
/// nowhere in `raw` (so no name does): the only places the parser can find a
/// name are where it was written. `None` when a boundary's field could not be
/// found, or no such prefix was.
fn renamed(raw: &[u8], multiparts: &[Multipart]) -> Option<Renamed> {
    let digest = Sha256::digest(raw);
    let prefix = (0u8..4)
        .map(|attempt| {
            let salted = Sha256::new().chain_update(digest).chain_update([attempt]).finalize();
            format!("MailroomBoundary{}", &hex(&salted)[..16])
        })
        .find(|prefix| !raw.windows(prefix.len()).any(|window| window == prefix.as_bytes()))?;
    let mut names: Vec<(&[u8], String)> = Vec::new();
    let mut replaced: Vec<(Range<usize>, usize)> = Vec::new();
    for multipart in multiparts {
        let name = match names.iter().position(|(boundary, _)| *boundary == multipart.boundary.as_slice()) {
            Some(name) => name,
            None => {
                names.push((&multipart.boundary, format!("{prefix}{:08x}", names.len())));
                names.len() - 1
            }
        };
        replaced.push((multipart.field.clone()?, name));
        let length = multipart.boundary.len();
        replaced.extend(multipart.delimiters.iter().map(|at| (*at..*at + length, name)));
    }
    replaced.sort_by_key(|(range, _)| range.start);
    let length = prefix.len() + 8;
    let mut bytes = Vec::with_capacity(raw.len() + replaced.len() * length);
    let mut written = Vec::with_capacity(replaced.len());
    let mut copied = 0;
    for (range, name) in replaced {
        bytes.extend_from_slice(&raw[copied..range.start]);
        written.push((range.clone(), bytes.len()));
        bytes.extend_from_slice(names[name].1.as_bytes());
        copied = range.end;
    }
    bytes.extend_from_slice(&raw[copied..]);
    Some(Renamed { bytes, names: written, length })
}

#[cfg(test)]
mod tests {
    use mail_parser::{Message, PartType};

    use super::*;
    use crate::mail::inbound;

    /// A message whose body is `body`, a multipart/mixed delimited by `boundary`.
    fn multipart(boundary: &str, body: &str) -> Vec<u8> {
        format!(
            "From: ana@customer.example\r\nSubject: Order 4471\r\nMIME-Version: 1.0\r\n\
             Content-Type: multipart/mixed; boundary=\"{boundary}\"\r\n\r\n{body}"
        )
        .into_bytes()
    }

    /// Two parts delimited by `abc`: text, then a file, `abc` written as each
    /// line it stands for says (`{open}`, `{close}`: the delimiter lines).
    fn text_and_file(text: &str, file: &str, open: &str, close: &str) -> Vec<u8> {
        multipart(
            "abc",
            &format!(
                "{open}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n{open}\r\n\
                 Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"order.txt\"\r\n\r\n\
                 {file}\r\n{close}\r\n"
            ),
        )
    }

    /// What the node reads of `raw` (its text, and each file's bytes), and
    /// whether the parser was handed a copy.
    fn read(raw: &[u8]) -> (String, Vec<Vec<u8>>, bool) {
        let parsed = inbound::parse(raw).expect("a message");
        let files =
            (0..parsed.attachments.len()).map(|index| inbound::attachment(raw, index).expect("a file").0).collect();
        (parsed.text.replace("\r\n", "\n"), files, ForTheParser::of(raw).renamed.is_some())
    }

    #[track_caller]
    fn check(raw: &[u8], text: &str, files: &[&str], renamed: bool) {
        let (read_text, read_files, was_renamed) = read(raw);
        assert_eq!(read_text, text, "{}", String::from_utf8_lossy(raw));
        let read_files: Vec<String> =
            read_files.iter().map(|file| String::from_utf8_lossy(file).replace("\r\n", "\n")).collect();
        assert_eq!(read_files, files, "{}", String::from_utf8_lossy(raw));
        assert_eq!(was_renamed, renamed, "renamed? {}", String::from_utf8_lossy(raw));
    }

    #[test]
    fn a_boundary_written_where_it_delimits_nothing_no_longer_cuts_the_part_short() {
        let plain = |text: &str| text_and_file(text, "4471", "--abc", "--abc--");
        // Mid-line, and as a line's start followed by more than padding.
        check(
            &plain("Hello,\r\nsee text --abc more\r\nthanks"),
            "Hello,\nsee text --abc more\nthanks",
            &["4471"],
            true,
        );
        check(&plain("Hello,\r\n--abcdef\r\nthanks"), "Hello,\n--abcdef\nthanks", &["4471"], true);
        check(&plain("Hello,\r\n--abc more\r\nthanks"), "Hello,\n--abc more\nthanks", &["4471"], true);
        check(&plain("Hello,\r\n--abc--more\r\nthanks"), "Hello,\n--abc--more\nthanks", &["4471"], true);
        check(&plain("Hello,\r\n---abc\r\nthanks"), "Hello,\n---abc\nthanks", &["4471"], true);
        check(&plain("ends with --abc"), "ends with --abc", &["4471"], true);
        // In a file's bytes too.
        let file = text_and_file("Hello", "line one\r\nx --abc y\r\nline three", "--abc", "--abc--");
        check(&file, "Hello", &["line one\nx --abc y\nline three"], true);
        // With delimiters padded, as RFC 2046 allows.
        let padded = text_and_file("a --abc b", "4471", "--abc \t", "--abc--  ");
        check(&padded, "a --abc b", &["4471"], true);
    }

    #[test]
    fn a_boundary_in_quoted_printable_or_in_the_preamble_is_not_a_delimiter_either() {
        let quoted = multipart(
            "abc",
            "--abc\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n\
             caf=C3=A9 --abc ou th=C3=A9\r\n--abc--\r\n",
        );
        check(&quoted, "café --abc ou thé", &[], true);
        let preamble = multipart(
            "abc",
            "This preamble mentions --abcx.\r\n--abc\r\nContent-Type: text/plain\r\n\r\nthe text\r\n--abc--\r\n",
        );
        check(&preamble, "the text", &[], true);
    }

    /// Alternatives inside a mixed multipart, each with its boundary.
    fn nested(outer: &str, inner: &str, text: &str) -> Vec<u8> {
        multipart(
            outer,
            &format!(
                "--{outer}\r\nContent-Type: multipart/alternative; boundary={inner}\r\n\r\n\
                 --{inner}\r\nContent-Type: text/plain\r\n\r\n{text}\r\n\
                 --{inner}\r\nContent-Type: text/html\r\n\r\n<p>html</p>\r\n--{inner}--\r\n\
                 --{outer}\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment\r\n\r\n4471\r\n\
                 --{outer}--\r\n"
            ),
        )
    }

    #[test]
    fn nested_multiparts_are_read_whatever_their_boundaries_begin_with() {
        // Ordinary: nothing renamed, whichever boundary begins the other.
        check(&nested("abc", "abcd", "text"), "text", &["4471"], false);
        check(&nested("abcd", "abc", "text"), "text", &["4471"], false);
        check(&nested("abc", "xyz", "text"), "text", &["4471"], false);
        // The enclosing boundary inside an inner part is not what the parser
        // searches there, so it needs nothing.
        check(&nested("abc", "xyz", "see --abc here"), "see --abc here", &["4471"], false);
        // The inner boundary written within a line of the inner text.
        check(&nested("abc", "abcd", "see --abcd here"), "see --abcd here", &["4471"], true);
        check(&nested("abcd", "abc", "--abcd is the other"), "--abcd is the other", &["4471"], true);
    }

    #[test]
    fn an_ordinary_message_is_handed_over_as_it_is() {
        // A boundary at the very start of the body, padding, a close delimiter.
        check(&text_and_file("Hello", "4471", "--abc", "--abc--"), "Hello", &["4471"], false);
        check(&text_and_file("Hello", "4471", "--abc\t ", "--abc-- "), "Hello", &["4471"], false);
        // Lines that only look like a delimiter.
        check(
            &text_and_file("--\r\n-- abc\r\n--ab\r\n- -abc", "4471", "--abc", "--abc--"),
            "--\n-- abc\n--ab\n- -abc",
            &["4471"],
            false,
        );
        // A preamble and an epilogue (which the parser does not read).
        let around = multipart(
            "abc",
            "A preamble.\r\n--abc\r\nContent-Type: text/plain\r\n\r\nthe text\r\n--abc--\r\nAn epilogue: --abc tail\r\n",
        );
        check(&around, "the text", &[], false);
        // Bare line feeds.
        let bare = String::from_utf8(text_and_file("Hello\r\nthere", "4471", "--abc", "--abc--"))
            .unwrap()
            .replace("\r\n", "\n");
        check(bare.as_bytes(), "Hello\nthere", &["4471"], false);
        // Not multipart: no boundary to mistake.
        check(b"From: a@b.example\r\nSubject: s\r\n\r\ntext --abc more", "text --abc more", &[], false);
    }

    #[test]
    fn a_message_attached_unencoded_is_read_whole_and_served_as_it_was_sent() {
        let multipart_message = |text: &str| {
            format!(
                "From: b@c.example\r\nSubject: inner\r\nContent-Type: multipart/mixed; boundary=\"def\"\r\n\r\n\
                 --def\r\nContent-Type: text/plain\r\n\r\n{text}\r\n--def--"
            )
        };
        let plain_message = |text: &str| format!("From: b@c.example\r\nSubject: inner\r\n\r\n{text}");
        let cases = [
            (multipart_message("inner text"), "inner text", false),
            (multipart_message("inner --def text"), "inner --def text", true),
            // The parser reads an attached message's body by the boundary around it.
            (plain_message("see --abc here"), "see --abc here", true),
            // An attached multipart's own parts are read by its own.
            (multipart_message("see --abc here"), "see --abc here", false),
        ];
        for (sent, text, renamed) in cases {
            let raw = multipart(
                "abc",
                &format!(
                    "--abc\r\nContent-Type: text/plain\r\n\r\nouter\r\n--abc\r\nContent-Type: message/rfc822\r\n\r\n\
                     {sent}\r\n--abc--\r\n"
                ),
            );
            let for_the_parser = ForTheParser::of(&raw);
            assert_eq!(for_the_parser.renamed.is_some(), renamed, "{sent}");
            let message = MessageParser::default().parse(for_the_parser.bytes()).unwrap();
            let attached = message.attachment(0).and_then(|part| part.message()).unwrap();
            assert_eq!(attached.body_text(0).unwrap(), text);
            assert_eq!(inbound::parse(&raw).unwrap().text.trim_end(), "outer");
            assert_eq!(inbound::attachment(&raw, 0).unwrap().0, sent.as_bytes(), "served as sent, its boundaries too");
        }
    }

    #[test]
    fn a_boundary_whose_field_cannot_be_found_as_it_was_read_leaves_the_message_as_it_is() {
        // Escaped in its quotes: the parser reads `abc`, the field says `a\bc`.
        let escaped = String::from_utf8(text_and_file("see --abc here", "4471", "--abc", "--abc--"))
            .unwrap()
            .replace("boundary=\"abc\"", "boundary=\"a\\bc\"");
        assert!(ForTheParser::of(escaped.as_bytes()).renamed.is_none());
        let value = |field: &[u8]| parameter_value(field, 0..field.len(), b"abc");
        assert_eq!(value(b"multipart/mixed; Boundary = \"abc\""), Some(29..32), "any case, blanks around `=`");
        assert_eq!(value(b"multipart/mixed; boundary=abc;x=y"), Some(26..29));
        assert_eq!(value(b"multipart/mixed; x-boundary=abc"), None);
        assert_eq!(value(b"multipart/mixed; boundary=abcd"), None);
        assert_eq!(value(b"multipart/mixed; boundary*0=abc"), None, "split by RFC 2231");
    }

    /// What mail-parser reads of `raw`, beside the names of its boundaries: each
    /// part's headers (a content type without its boundary) and contents.
    fn as_read(raw: &[u8]) -> Vec<String> {
        fn parts(message: &Message<'_>, read: &mut Vec<String>) {
            read.push(format!("{:?} {:?} {:?}", message.text_body, message.html_body, message.attachments));
            for part in &message.parts {
                for header in &part.headers {
                    read.push(match header.value.as_content_type() {
                        Some(kind) => {
                            let kept: Vec<_> =
                                kind.attributes().unwrap_or_default().iter().filter(|a| a.name != "boundary").collect();
                            format!("{}: {}/{:?} {kept:?}", header.name.as_str(), kind.ctype(), kind.subtype())
                        }
                        None => format!("{}: {:?}", header.name.as_str(), header.value),
                    });
                }
                match &part.body {
                    PartType::Message(attached) => parts(attached, read),
                    body => read.push(format!("{body:?} {}", part.is_encoding_problem)),
                }
            }
        }
        let mut read = Vec::new();
        parts(&MessageParser::default().parse(raw).unwrap(), &mut read);
        read
    }

    #[test]
    fn renaming_the_boundaries_of_a_message_read_right_changes_nothing_the_parser_reads() {
        // Every fixture but the one written to be misread.
        let fixtures = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mail"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| !path.ends_with("boundary-in-text.eml"))
            .map(|path| std::fs::read(path).unwrap());
        let made = [
            text_and_file("Hello", "4471", "--abc", "--abc--"),
            text_and_file("Hello", "4471", "--abc\t ", "--abc-- "),
            nested("abc", "abcd", "text"),
            nested("abcd", "abc", "text"),
            multipart(
                "abc",
                "A preamble.\r\n--abc\r\nContent-Type: text/plain\r\n\r\nthe text\r\n--abc--\r\nepilogue\r\n",
            ),
        ];
        let mut multiparts_renamed = 0;
        for raw in fixtures.chain(made) {
            let survey = survey(&raw).unwrap();
            assert!(!survey.misread, "{}", String::from_utf8_lossy(&raw));
            let renamed = renamed(&raw, &survey.multiparts).unwrap().bytes;
            assert_eq!(as_read(&renamed), as_read(&raw), "{}", String::from_utf8_lossy(&renamed));
            multiparts_renamed += survey.multiparts.len();
        }
        assert!(multiparts_renamed >= 8, "the fixtures and the made-up messages hold multiparts to rename");
    }
}
