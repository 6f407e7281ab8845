//! The tokenizer: HTML read as a browser's tokenizer reads it, as far as text
//! needs it: text, start tags with their attributes, end tags. Comments,
//! doctypes and the content of raw-text elements (`script`, `style`, …) are
//! passed over here and never reach the text.

/// Elements whose content is not markup, and is never shown as text: read up
/// to their end tag and dropped whole.
const RAW_TEXT: &[&str] = &["script", "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes"];

/// A piece of HTML.
#[derive(Debug, PartialEq)]
pub(crate) enum Token<'a> {
    /// Text between tags, its character references not yet decoded.
    Text(&'a str),
    Start(Tag<'a>),
    /// An end tag's name, in lower case.
    End(String),
}

#[derive(Debug, PartialEq)]
pub(crate) struct Tag<'a> {
    /// In lower case.
    pub(crate) name: String,
    /// Names in lower case, values as written.
    attributes: Vec<(String, &'a str)>,
    pub(crate) self_closing: bool,
}

impl Tag<'_> {
    pub(crate) fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.iter().find(|(attribute, _)| attribute == name).map(|(_, value)| *value)
    }

    /// Whether the element hides what it holds: `hidden`, or `display:none` in its own style.
    pub(crate) fn hides(&self) -> bool {
        self.attribute("hidden").is_some()
            || self.attribute("style").is_some_and(|style| {
                let style: String = style.chars().filter(|c| !c.is_ascii_whitespace()).collect();
                style.to_ascii_lowercase().contains("display:none")
            })
    }

    /// Whether it is one of Outlook's paragraphs, which its stylesheet sets without margins.
    pub(crate) fn is_outlook_paragraph(&self) -> bool {
        self.attribute("class")
            .is_some_and(|classes| classes.split_ascii_whitespace().any(|class| class.starts_with("Mso")))
    }
}

/// The HTML tokenizer's states, as far as text needs them: where the next
/// token starts. Every index it slices at is that of an ASCII byte (`<`, `>`,
/// whitespace, a quote), so always a character boundary.
pub(crate) struct Tokens<'a> {
    html: &'a str,
    at: usize,
}

impl<'a> Tokens<'a> {
    /// Tokens of `html`, from its start.
    pub(crate) fn new(html: &'a str) -> Tokens<'a> {
        Tokens { html, at: 0 }
    }

    pub(crate) fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let rest = &self.html[self.at..];
            let bytes = rest.as_bytes();
            if bytes.is_empty() {
                return None;
            }
            if bytes[0] != b'<' {
                let end = rest.find('<').unwrap_or(rest.len());
                self.at += end;
                return Some(Token::Text(&rest[..end]));
            }
            match bytes.get(1) {
                Some(b'!') if rest.starts_with("<!--") => {
                    // `<!-->` and `<!--->` end where they start, as in a browser.
                    self.at += rest[2..].find("-->").map_or(rest.len(), |end| 2 + end + 3);
                }
                // `<!DOCTYPE …>`, `<![if …]>` (Outlook's), `<?xml …>`: bogus comments.
                Some(b'!' | b'?') => self.skip_past_closing_bracket(),
                Some(b'/') if bytes.get(2).is_some_and(u8::is_ascii_alphabetic) => {
                    let (name, _) = tag_name(&rest[2..]);
                    let (_, length, _) = attributes(&rest[2 + name.len()..]);
                    let Some(length) = length else {
                        self.at = self.html.len();
                        return None;
                    };
                    self.at += 2 + name.len() + length;
                    return Some(Token::End(name.to_ascii_lowercase()));
                }
                Some(b'/') => self.skip_past_closing_bracket(),
                Some(first) if first.is_ascii_alphabetic() => {
                    let (name, _) = tag_name(&rest[1..]);
                    let (attributes, length, self_closing) = attributes(&rest[1 + name.len()..]);
                    // A tag the input ends inside is no tag, as in a browser.
                    let Some(length) = length else {
                        self.at = self.html.len();
                        return None;
                    };
                    self.at += 1 + name.len() + length;
                    let name = name.to_ascii_lowercase();
                    if RAW_TEXT.contains(&name.as_str()) && !self_closing {
                        self.skip_raw_text(&name);
                        continue;
                    }
                    return Some(Token::Start(Tag { name, attributes, self_closing }));
                }
                _ => {
                    self.at += 1;
                    return Some(Token::Text("<"));
                }
            }
        }
    }

    fn skip_past_closing_bracket(&mut self) {
        let rest = &self.html[self.at..];
        self.at += rest.find('>').map_or(rest.len(), |end| end + 1);
    }

    /// Skips a raw-text element's content and its end tag: `</name` followed by
    /// whitespace, `/` or `>`, in any case.
    fn skip_raw_text(&mut self, name: &str) {
        let rest = &self.html[self.at..];
        let mut from = 0;
        while let Some(found) = rest[from..].find("</") {
            let start = from + found + 2;
            let candidate = rest.as_bytes().get(start..start + name.len());
            let after = rest.as_bytes().get(start + name.len());
            if candidate.is_some_and(|candidate| candidate.eq_ignore_ascii_case(name.as_bytes()))
                && after.is_none_or(|byte| byte.is_ascii_whitespace() || *byte == b'/' || *byte == b'>')
            {
                self.at += start;
                self.skip_past_closing_bracket();
                return;
            }
            from = start;
        }
        self.at = self.html.len();
    }
}

/// A tag's name at the start of `rest`: up to whitespace, `/` or `>`.
fn tag_name(rest: &str) -> (&str, usize) {
    let end = rest.find(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>').unwrap_or(rest.len());
    (&rest[..end], end)
}

/// A tag's attributes, from just after its name: each name and value, how far
/// the tag goes (past its `>`; `None` when the input ends first) and whether it
/// closes itself (`/>`). A quoted value may hold `>`.
fn attributes(rest: &str) -> (Vec<(String, &str)>, Option<usize>, bool) {
    let bytes = rest.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    let mut self_closing = false;
    loop {
        while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b'/') {
            self_closing = bytes[at] == b'/';
            at += 1;
        }
        match bytes.get(at) {
            None => return (found, None, false),
            Some(b'>') => return (found, Some(at + 1), self_closing),
            Some(_) => self_closing = false,
        }
        let name_start = at;
        // A name may begin with `=`; it ends at whitespace, `/`, `>` or the next `=`.
        at += 1;
        while at < bytes.len() && !matches!(bytes[at], b'=' | b'>' | b'/') && !bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        let name = rest[name_start..at].to_ascii_lowercase();
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if bytes.get(at) != Some(&b'=') {
            found.push((name, ""));
            continue;
        }
        at += 1;
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        let value = match bytes.get(at) {
            Some(quote @ (b'"' | b'\'')) => {
                let start = at + 1;
                let Some(length) = rest[start..].find(*quote as char) else {
                    return (found, None, false);
                };
                at = start + length + 1;
                &rest[start..start + length]
            }
            _ => {
                let start = at;
                while at < bytes.len() && bytes[at] != b'>' && !bytes[at].is_ascii_whitespace() {
                    at += 1;
                }
                &rest[start..at]
            }
        };
        found.push((name, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_read_as_a_browser_reads_them() {
        let mut tokens = Tokens { html: "<a href='x>y' data-x=1 hidden/><IMG SRC=a.png/>", at: 0 };
        let Some(Token::Start(tag)) = tokens.next() else { panic!("a start tag") };
        assert_eq!(tag.name, "a");
        assert_eq!(tag.attributes, vec![("href".into(), "x>y"), ("data-x".into(), "1"), ("hidden".into(), "")]);
        assert!(tag.self_closing);
        let Some(Token::Start(tag)) = tokens.next() else { panic!("a start tag") };
        assert_eq!((tag.name.as_str(), tag.attribute("src")), ("img", Some("a.png/")));
        assert_eq!(tokens.next(), None);
    }
}
